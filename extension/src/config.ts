/** The `kestrel.*` section of VS Code's settings: read it, and write a key where it is set now. */
import * as vscode from "vscode";

export function config(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration("kestrel");
}

/** The most specific scope that sets `key` (folder, workspace), else the user settings. */
function target(key: string): vscode.ConfigurationTarget {
  const inspect = config().inspect(key);
  if (inspect?.workspaceFolderValue !== undefined) return vscode.ConfigurationTarget.WorkspaceFolder;
  if (inspect?.workspaceValue !== undefined) return vscode.ConfigurationTarget.Workspace;
  return vscode.ConfigurationTarget.Global;
}

export async function updateSetting(key: string, value: unknown): Promise<void> {
  await config().update(key, value, target(key));
}
