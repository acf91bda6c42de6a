import { realpathSync } from "fs";
import { realpath } from "fs/promises";
import * as nodePath from "path";
import * as vscode from "vscode";

/**
 * Where a path on this disk really leads through links: a file that is a link, or a folder on its way
 * (a cloned repository's `ext -> ~/.vscode/extensions/x`). A path that does not exist yet (a new file) is
 * resolved through its nearest existing folder. Every check that refuses a link (what the chat attaches,
 * mentions, writes) judges this target, as the server does. Synchronous: the chips are drawn as the
 * editor changes, and a few local `realpath` calls take microseconds.
 */
export function resolveLinks(fsPath: string): string {
  const rest: string[] = [];
  for (let existing = fsPath; ; ) {
    try {
      return nodePath.join(realpathSync(existing), ...rest);
    } catch {
      const parent = nodePath.dirname(existing);
      if (parent === existing) return fsPath;
      rest.unshift(nodePath.basename(existing));
      existing = parent;
    }
  }
}

/** Whether a resolved path lies in one of the workspace folders (each resolved through its own links). */
export async function inWorkspaceFolders(real: string): Promise<boolean> {
  const roots = await Promise.all(
    (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file").map((f) => realpath(f.uri.fsPath).catch(() => f.uri.fsPath)),
  );
  return roots.some((r) => real === r || real.startsWith(r.endsWith(nodePath.sep) ? r : r + nodePath.sep));
}
