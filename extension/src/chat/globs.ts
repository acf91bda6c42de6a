/**
 * Globs for the mention picker (pure): VS Code's `files.exclude` / `search.exclude` patterns (relative
 * to the workspace folder, `**`, `*`, `?`, `{a,b}`, `[abc]`; a pattern that matches a folder hides
 * everything under it), and `kestrel.completion.excludeGlobs` read exactly as the server reads them
 * (`pyserver/kestrel/context/exclusion.py`: fnmatch against the whole path or the file name,
 * case-insensitive), so a file the server would never send is never offered or attached here either.
 */

/** `a/{b,c}/*.{js,ts}` → every pattern it stands for (nested braces too). */
export function expandBraces(glob: string): string[] {
  let depth = 0;
  let open = -1;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "\\") i++;
    else if (c === "{" && depth++ === 0) open = i;
    else if (c === "}" && depth > 0 && --depth === 0) {
      const head = glob.slice(0, open);
      const tail = glob.slice(i + 1);
      const alternatives: string[] = [];
      let d = 0;
      let from = open + 1;
      for (let j = open + 1; j < i; j++) {
        const cj = glob[j];
        if (cj === "\\") j++;
        else if (cj === "{") d++;
        else if (cj === "}") d--;
        else if (cj === "," && d === 0) {
          alternatives.push(glob.slice(from, j));
          from = j + 1;
        }
      }
      alternatives.push(glob.slice(from, i));
      return alternatives.flatMap((alt) => expandBraces(head + alt + tail));
    }
  }
  return [glob];
}

const escape = (c: string) => c.replace(/[.+^${}()|[\]\\/?*]/g, "\\$&");

/** A character class `[...]` starting at `i`: its RegExp and where it ends, or undefined if unclosed. */
function charClass(glob: string, i: number): { re: string; end: number } | undefined {
  const close = glob.indexOf("]", i + 2);
  if (close < 0) return undefined;
  let body = glob.slice(i + 1, close);
  const negate = body.startsWith("!") || body.startsWith("^");
  if (negate) body = body.slice(1);
  return { re: `[${negate ? "^" : ""}${body.replace(/\\/g, "\\\\").replace(/\]/g, "\\]")}]`, end: close };
}

/** One VS Code glob (no braces) as a RegExp over a relative path. */
function vscodeGlobBody(glob: string): string {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "*" && glob[i + 1] === "*") {
      const atStart = i === 0 || glob[i - 1] === "/";
      const slashAfter = glob[i + 2] === "/";
      if (atStart && slashAfter) {
        re += "(?:[^/]*/)*"; // `**/`: any number of folders, none too
        i += 2;
      } else if (atStart && i + 2 === glob.length) {
        re += ".*";
        i += 1;
      } else {
        re += "[^/]*"; // `a**b` is `a*b`
        i += 1;
      }
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else if (c === "[") {
      const cls = charClass(glob, i);
      if (cls) {
        re += cls.re;
        i = cls.end;
      } else re += "\\[";
    } else re += escape(c);
  }
  return re;
}

/** `files.exclude`-style globs: `excludes(rel)` when a pattern matches the path or one of its folders. */
export class PathExcluder {
  private readonly re: RegExp | undefined;

  constructor(patterns: readonly string[]) {
    const bodies = patterns
      .flatMap(expandBraces)
      .map((p) => p.trim().replace(/\\/g, "/").replace(/^\.\//, "").replace(/\/+$/, ""))
      .filter(Boolean)
      .map(vscodeGlobBody);
    this.re = bodies.length ? new RegExp(`^(?:${bodies.join("|")})$`, "i") : undefined;
  }

  get empty(): boolean {
    return !this.re;
  }

  excludes(rel: string): boolean {
    const re = this.re;
    if (!re) return false;
    if (re.test(rel)) return true;
    for (let i = rel.indexOf("/"); i > 0; i = rel.indexOf("/", i + 1)) if (re.test(rel.slice(0, i))) return true;
    return false;
  }
}

/** The patterns a `files.exclude`-like setting turns on (`true`; a `{ when }` condition is left out). */
export function enabledPatterns(setting: unknown): string[] {
  if (!setting || typeof setting !== "object") return [];
  return Object.entries(setting as Record<string, unknown>).filter(([, on]) => on === true).map(([p]) => p);
}

/**
 * A `.gitignore` as globs of the kind above (what Quick Open hides with `search.useIgnoreFiles`):
 * `name` anywhere below it, `a/b` and `/a` from its folder, `dir/` a folder. `dir` is the folder
 * the file sits in (relative to the workspace folder, "" at its root): a nested `.gitignore` speaks
 * only for what is below it. Negations (`!keep`) are left out: the picker may hide a little more than
 * Git does, never less.
 */
export function gitignoreGlobs(text: string, dir = ""): string[] {
  const base = dir.replace(/\\/g, "/").replace(/^\/+|\/+$/g, "");
  const out: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.replace(/(?<!\\)\s+$/, "");
    if (!line || line.startsWith("#") || line.startsWith("!")) continue;
    if (line.startsWith("\\#") || line.startsWith("\\!")) line = line.slice(1);
    line = line.replace(/\/+$/, "");
    if (!line) continue;
    const glob = line.includes("/") ? line.replace(/^\/+/, "") : `**/${line}`;
    out.push(base ? `${base}/${glob}` : glob);
  }
  return out;
}

/** One for `findFiles`: every enabled pattern, braces expanded, in one `{a,b}` group. */
export function findFilesExclude(patterns: readonly string[]): string | undefined {
  const all = [...new Set(patterns.flatMap(expandBraces).map((p) => p.trim()).filter(Boolean))];
  if (!all.length) return undefined;
  return all.length === 1 ? all[0] : `{${all.join(",")}}`;
}

/** Python's fnmatch as a RegExp (`*` crosses `/`, as the server's check does). */
function fnmatchRegExp(pattern: string): RegExp {
  let re = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "*") re += ".*";
    else if (c === "?") re += ".";
    else if (c === "[") {
      const cls = charClass(pattern, i);
      if (cls) {
        re += cls.re;
        i = cls.end;
      } else re += "\\[";
    } else re += escape(c);
  }
  return new RegExp(`^${re}$`, "s");
}

/**
 * `kestrel.completion.excludeGlobs` against a file's path, as the server applies them: the whole
 * path, the name, or the path from any of its folders on (a pattern is relative to a workspace
 * folder, as `files.exclude` is: `private/**` hides `/home/u/ws/private/keys.py`), lower-cased;
 * `**\/x` is `x` from any folder on.
 */
export class UserGlobs {
  private readonly res: RegExp[] = [];

  constructor(globs: readonly string[]) {
    for (const glob of globs) {
      let p = glob.replace(/\\/g, "/").toLowerCase();
      if (p.startsWith("./")) p = p.slice(2);
      if (p.startsWith("**/")) p = p.slice(3);
      if (!p) continue;
      this.res.push(fnmatchRegExp(p));
    }
  }

  excludes(path: string): boolean {
    if (!this.res.length) return false;
    const p = path.replace(/\\/g, "/").toLowerCase();
    const name = p.replace(/\/+$/, "").split("/").pop() ?? p;
    const tails = [p, name];
    for (let i = p.indexOf("/"); i >= 0; i = p.indexOf("/", i + 1)) if (i + 1 < p.length) tails.push(p.slice(i + 1));
    return this.res.some((re) => tails.some((t) => re.test(t)));
  }
}
