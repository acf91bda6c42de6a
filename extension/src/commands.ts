/** The `kestrel.*` commands of the client itself (inline edits and next edits register their own). */
import * as vscode from "vscode";
import { ChatViewProvider } from "./chat/chatView";
import { showCompletionContext } from "./completionContext";
import { selectEffort, selectProvider, showMenu, type MenuDeps } from "./quickPicks";

export interface CommandDeps extends MenuDeps {
  chat: ChatViewProvider;
}

export function registerCommands(d: CommandDeps): vscode.Disposable[] {
  const commands: Record<string, () => unknown> = {
    "kestrel.toggleInlineCompletions": () => d.completions.toggle(),
    "kestrel.setApiKey": () => d.apiKey.prompt(),
    "kestrel.clearApiKey": () => d.apiKey.clear(),
    "kestrel.selectEffort": () => selectEffort(),
    "kestrel.selectProvider": () => selectProvider(d.apiKey),
    "kestrel.showMenu": () => showMenu(d),
    "kestrel.showLogs": () => d.log.show(true),
    "kestrel.showCompletionContext": () => showCompletionContext(d.server.running(), d.log),
    "kestrel.focusChat": () => d.chat.focus(),
    "kestrel.newChat": () => d.chat.newChat(),
    "kestrel.stopChat": () => d.chat.stop(),
    "kestrel.restartServer": () => d.server.restart("restart requested"),
    "kestrel.installServer": () => d.installer.install(),
  };
  return Object.entries(commands).map(([id, run]) => vscode.commands.registerCommand(id, run));
}
