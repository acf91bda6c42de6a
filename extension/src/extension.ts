/**
 * Kestrel's VS Code client, wired together. Each concern lives in its own module:
 *   serverLifecycle.ts  find (serverLocator.ts), start (languageClient.ts), restart and stop `kestrel-lsp`
 *   serverInstaller.ts  offer / run the install into a private environment
 *   statusBar.ts        the status bar item (statusView.ts renders it)
 *   inlineCompletions.ts the gates, trust check and timing around LSP inline completions;
 *   cursorRest.ts       where the cursor rests, for a local model to read ahead
 *   apiKey.ts           the API key in SecretStorage;  trust.ts  workspace trust
 *   commands.ts, quickPicks.ts  commands and menus;  chat/, edit/  the chat panel, inline and next edits
 */
import * as vscode from "vscode";
import { ApiKey } from "./apiKey";
import { explainInChat } from "./chat/explain";
import { ChatViewProvider, type ChatClient } from "./chat/chatView";
import { registerCommands } from "./commands";
import { config } from "./config";
import { InlineEditController } from "./edit/inlineEdit";
import { NextEditController } from "./edit/nextEdit";
import { InlineCompletions } from "./inlineCompletions";
import { CursorRest } from "./cursorRest";
import { createLog } from "./log";
import { Redactor } from "./redact";
import { ServerInstaller } from "./serverInstaller";
import { ServerLifecycle } from "./serverLifecycle";
import { relativePathSettings } from "./settings";
import { StatusBar } from "./statusBar";
import { WorkspaceTrustGate } from "./trust";

let server: ServerLifecycle | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const redactor = new Redactor();
  const log = createLog(redactor);
  const trust = new WorkspaceTrustGate();
  const completions = new InlineCompletions(log, trust.mayUseCode, () => statusBar.render());
  const statusBar = new StatusBar(() => completions.gates);
  const apiKey = new ApiKey(context.secrets, redactor);

  // The chat view and the edit features talk to whichever client is running now (they survive
  // restarts), through the trust gate: their kestrel/* requests wait for consent in an untrusted workspace.
  const running = trust.guardClient((): ChatClient | undefined => lifecycle.running());
  const chat = new ChatViewProvider(context, running, trust.mayUseCode, statusBar);
  const inlineEdits = new InlineEditController(running);

  const lifecycle = new ServerLifecycle({
    context,
    log,
    statusBar,
    apiKey: () => apiKey.value,
    redactor,
    middleware: {
      executeCommand: trust.guardCommands(explainInChat(chat)),
      resolveCodeAction: trust.resolveCodeAction,
      provideInlineCompletionItems: completions.provideInlineCompletionItems,
      // The agent's proposed changes: recorded on the answer with a checkpoint (chat/agentApply.ts).
      workspace: { handleApplyEdit: chat.handleApplyEdit },
    },
    notInstalled: (python, problem) => void installer.offer(python, problem),
  });
  const installer = new ServerInstaller(context, log, lifecycle);
  server = lifecycle;

  context.subscriptions.push(
    log,
    statusBar,
    apiKey,
    chat,
    vscode.window.registerWebviewViewProvider(ChatViewProvider.viewId, chat, { webviewOptions: { retainContextWhenHidden: true } }),
    inlineEdits,
    new NextEditController(running, inlineEdits),
    new CursorRest({
      send: (params) => void lifecycle.notify("kestrel/cursor", params),
      gates: () => completions.gates,
      allowed: trust.allowedNow,
      readAhead: () => config().get<boolean>("completion.readAhead", true),
    }),
    ...registerCommands({ log, completions, apiKey, statusBar, server: lifecycle, installer, chat }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration("kestrel")) return;
      warnRelativePaths(log);
      completions.reloadGates();
      statusBar.render();
      void lifecycle.settingsChanged(e);
    }),
    apiKey.onDidChange(() => void lifecycle.apiKeyChanged()),
  );

  await apiKey.load();
  warnRelativePaths(log);
  void lifecycle.start();
}

/** A relative model or CA path is not forwarded (it would resolve against a folder the server does not control): say so. */
function warnRelativePaths(log: vscode.LogOutputChannel): void {
  for (const key of relativePathSettings(config())) {
    log.warn(`kestrel.${key} is not an absolute path; Kestrel ignores it.`);
  }
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}
