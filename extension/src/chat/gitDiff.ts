/**
 * `#diff`: the working tree's changes (staged and not), from the built-in Git extension's API
 * (`vscode.git`, API 1). No Git extension, Git disabled, or no repository: the picker does not offer
 * it. A file's section of the diff is dropped when the file may not be sent (a secret, excludeGlobs):
 * a diff of `.env` is `.env`'s content.
 */
import * as vscode from "vscode";

/** The part of the Git extension's API this uses (git.d.ts). */
interface GitRepository {
  readonly rootUri: vscode.Uri;
  diff(cached?: boolean): Promise<string>;
}
interface GitApi {
  readonly repositories: GitRepository[];
}
interface GitExtension {
  readonly enabled: boolean;
  getAPI(version: 1): GitApi;
}

/** The Git API when the extension is already running with a repository open (never activates it on a keystroke). */
function gitApi(): GitApi | undefined {
  try {
    const ext = vscode.extensions.getExtension<GitExtension>("vscode.git");
    if (!ext?.isActive || !ext.exports?.enabled) return undefined;
    const api = ext.exports.getAPI(1);
    return api.repositories.length ? api : undefined;
  } catch {
    return undefined;
  }
}

export const gitAvailable = () => Boolean(gitApi());

export interface DiffSection {
  /** The path after `b/` (or `a/` for a deletion), relative to the repository. */
  path: string;
  text: string;
}

/** A unified diff cut at each `diff --git a/… b/…` header (text before the first header is dropped). */
export function splitDiff(diff: string): DiffSection[] {
  const out: DiffSection[] = [];
  const starts = [...diff.matchAll(/^diff --git /gm)].map((m) => m.index!);
  starts.forEach((start, i) => {
    const text = diff.slice(start, starts[i + 1] ?? diff.length).replace(/\n+$/, "");
    const header = /^diff --git "?a\/(.+?)"? "?b\/(.+?)"?$/m.exec(text.split("\n", 1)[0]);
    const plus = /^\+\+\+ "?b\/(.+?)"?\t?$/m.exec(text);
    const minus = /^--- "?a\/(.+?)"?\t?$/m.exec(text);
    const path = plus?.[1] ?? header?.[2] ?? minus?.[1] ?? header?.[1] ?? "";
    out.push({ path, text });
  });
  return out;
}

/** The sections whose files (both names, for a rename) may be sent. */
export function keepSections(sections: DiffSection[], mayShow: (path: string) => boolean): { kept: DiffSection[]; dropped: string[] } {
  const kept: DiffSection[] = [];
  const dropped: string[] = [];
  for (const s of sections) {
    const header = /^diff --git "?a\/(.+?)"? "?b\/(.+?)"?$/m.exec(s.text.split("\n", 1)[0]);
    const names = [s.path, header?.[1], header?.[2]].filter((n): n is string => Boolean(n));
    if (names.length && names.every(mayShow)) kept.push(s);
    else dropped.push(s.path || "(unknown file)");
  }
  return { kept, dropped };
}

export interface WorkingTreeDiff {
  text: string;
  files: string[];
  dropped: string[];
}

/**
 * Staged and unstaged changes of every repository, as one diff, without the sections of files
 * `refuses` names. Undefined when there is no Git (or no repository).
 */
export async function workingTreeDiff(refuses: (uri: vscode.Uri) => string | undefined): Promise<WorkingTreeDiff | undefined> {
  const api = gitApi();
  if (!api) return undefined;
  const parts: string[] = [];
  const files = new Set<string>();
  const dropped: string[] = [];
  for (const repo of api.repositories) {
    const [staged, unstaged] = await Promise.all([repo.diff(true).catch(() => ""), repo.diff(false).catch(() => "")]);
    for (const diff of [staged, unstaged]) {
      const { kept, dropped: out } = keepSections(splitDiff(diff), (p) => !refuses(vscode.Uri.joinPath(repo.rootUri, p)));
      dropped.push(...out);
      for (const s of kept) {
        files.add(s.path);
        parts.push(s.text);
      }
    }
  }
  return { text: parts.join("\n"), files: [...files], dropped: [...new Set(dropped)] };
}
