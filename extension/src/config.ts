/**
 * The `kestrel.*` section of VS Code's settings as Kestrel may use it: read it, and write a key
 * where it is set now.
 *
 * A workspace's own settings (`.vscode/settings.json`, a `.code-workspace` file) come with the
 * folder, from whoever wrote it. For the settings in RESTRICTED_SETTINGS / MACHINE_SETTINGS
 * (settings.ts) VS Code already drops the workspace's values: machine-scoped ones always, and
 * restricted ones (package.json `restrictedConfigurations`) while the workspace is untrusted.
 * It does so in its configuration service, when it parses the workspace and folder settings
 * (`scopes` without machine, `skipRestricted` while untrusted; read in code-server 4.139.1's
 * workbench), so `getConfiguration().get()` and `inspect()` alike never see those values, however
 * an extension reads them (extension/e2e/scenarios/untrustedWorkspace.mjs shows it end to end).
 * `config()` drops them again itself, through `inspect()`, because that filter lives in the
 * editor, not here: an editor on VS Code's API that does not honour `restrictedConfigurations`
 * or the `machine` scope must not let a workspace choose the model file, the endpoint or the
 * server command either.
 */
import * as vscode from "vscode";
import { userValue, workspaceMayChoose } from "./settings";

export function config(): vscode.WorkspaceConfiguration {
  return withoutWorkspaceChoices(vscode.workspace.getConfiguration("kestrel"), vscode.workspace.isTrusted);
}

/** `cfg`, except that `get` returns the user's value where the workspace may not choose one. */
export function withoutWorkspaceChoices(cfg: vscode.WorkspaceConfiguration, trusted: boolean): vscode.WorkspaceConfiguration {
  // A new object, not a Proxy: VS Code hands out a frozen configuration object.
  const get = (key: string, fallback?: unknown): unknown => {
    const own = workspaceMayChoose(key, trusted) ? undefined : userValue(cfg.inspect(key));
    const value = own ? own.value : cfg.get(key);
    return value === undefined ? fallback : value;
  };
  return {
    get,
    has: (key: string) => cfg.has(key),
    inspect: (key: string) => cfg.inspect(key),
    update: (key, value, target, overrideInLanguage) => cfg.update(key, value, target, overrideInLanguage),
  } as vscode.WorkspaceConfiguration;
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
