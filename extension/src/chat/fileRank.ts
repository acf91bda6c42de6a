/**
 * The picker's filter: workspace paths ranked for what was typed after `#`. Pure and allocation-light:
 * it runs in the extension host on every keystroke over the whole cached file list (10k+ paths), so
 * each entry carries its lower-cased path and where its name starts, computed once.
 *
 * Tiers, best first: the name is the query; the name starts with it; the name holds it at a word
 * start, then anywhere; the path holds it; the query's characters appear in order (fuzzy, scored by
 * runs and word starts, like Quick Open). Within a tier: shorter paths first, then by path.
 */

export interface PathEntry {
  /** Workspace-relative path, `/`-separated. */
  rel: string;
  lower: string;
  /** Where the last segment (the name) starts in `lower`. */
  base: number;
}

export function pathEntry(rel: string): PathEntry {
  const lower = rel.toLowerCase();
  return { rel, lower, base: lower.lastIndexOf("/") + 1 };
}

const TIER = 100_000;
const isBoundary = (c: string | undefined) => c === undefined || c === "/" || c === "_" || c === "-" || c === "." || c === " ";

/** Fuzzy: the query's characters in order in `s`; a score under TIER (higher is better), or -1. */
function fuzzy(q: string, s: string, base: number): number {
  let score = 0;
  let at = 0;
  let run = 0;
  for (let i = 0; i < q.length; i++) {
    const found = s.indexOf(q[i], at);
    if (found < 0) return -1;
    run = found === at && i > 0 ? run + 1 : 0;
    score += 1 + run * 4 + (isBoundary(s[found - 1]) ? 6 : 0) + (found >= base ? 2 : 0) - Math.min(found - at, 8) * 0.25;
    at = found + 1;
  }
  return Math.max(0, Math.min(TIER - 1, score * 100));
}

/** How well `entry` matches the lower-cased query `q` (higher is better), -1 when it does not. */
export function matchScore(q: string, entry: PathEntry): number {
  if (!q) return 0;
  const { lower, base } = entry;
  const name = base ? lower.slice(base) : lower;
  if (name === q) return 7 * TIER;
  const inName = name.indexOf(q);
  if (inName === 0) return 6 * TIER;
  if (inName > 0) return (isBoundary(name[inName - 1]) ? 5 : 4) * TIER;
  const inPath = lower.indexOf(q);
  if (inPath >= 0) return (isBoundary(lower[inPath - 1]) ? 3 : 2) * TIER;
  const f = fuzzy(q, lower, base);
  return f < 0 ? -1 : TIER + f;
}

/** The query as a path: lower case, `/` separators, no leading `./` or `/`. */
export const normalizeQuery = (query: string) => query.trim().toLowerCase().replace(/\\/g, "/").replace(/^\.?\/+/, "");

/**
 * The best `limit` entries for `query`, best first. An empty query keeps the given order (the
 * caller puts what matters first: the open files, then the shallow ones).
 */
export function rankPaths<T extends PathEntry>(query: string, entries: readonly T[], limit: number): T[] {
  const q = normalizeQuery(query);
  if (!q) return entries.slice(0, limit);
  const hits: { e: T; s: number }[] = [];
  for (const e of entries) {
    const s = matchScore(q, e);
    if (s >= 0) hits.push({ e, s });
  }
  hits.sort((a, b) => b.s - a.s || a.e.lower.length - b.e.lower.length || (a.e.rel < b.e.rel ? -1 : a.e.rel > b.e.rel ? 1 : 0));
  return hits.slice(0, limit).map((h) => h.e);
}

/** Symbol names for `query`: the exact name, then prefix, then substring, then the provider's own (fuzzy) matches. */
export function rankNames<T extends { name: string }>(query: string, items: readonly T[], limit: number): T[] {
  const q = query.trim().toLowerCase();
  const score = (name: string) => {
    const n = name.toLowerCase();
    if (!q) return 0;
    if (n === q) return 4;
    if (n.startsWith(q)) return 3;
    if (n.includes(q)) return 2;
    return 1;
  };
  return items
    .map((item, i) => ({ item, i, s: score(item.name) }))
    .sort((a, b) => b.s - a.s || a.item.name.length - b.item.name.length || a.i - b.i)
    .slice(0, limit)
    .map((x) => x.item);
}
