/** The install UI: offer a private environment when no interpreter has Kestrel, and "Kestrel: Install Language Server". */
import * as vscode from "vscode";
import { config } from "./config";
import { InstallError, installPrivateServer } from "./install";
import { pythonExtensionInterpreter } from "./serverLocator";

/** What the installer needs from the running client. */
export interface InstallTarget {
  restart(reason: string): Promise<void>;
  onChoice(choice: string | undefined): void;
}

export class ServerInstaller {
  private installing = false;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
    private readonly server: InstallTarget,
  ) {}

  async offer(python: string, problem: string): Promise<void> {
    const choice = await vscode.window.showWarningMessage(
      `Kestrel: the language server is not installed (${problem}). Install it into a private environment for Kestrel?`,
      "Install",
      "Choose Python…",
      "Show Logs",
    );
    if (choice === "Install") await this.install(python);
    else if (choice === "Choose Python…") {
      await vscode.commands.executeCommand("workbench.action.openSettings", "kestrel.server.python");
    } else this.server.onChoice(choice);
  }

  async install(basePython?: string): Promise<void> {
    if (this.installing) return;
    this.installing = true;
    const cfg = config();
    const python = basePython ?? (cfg.get<string>("server.python") || (await pythonExtensionInterpreter(this.log)) || "python3");
    try {
      await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: "Kestrel: installing the language server", cancellable: true },
        async (progress, token) => {
          const abort = new AbortController();
          token.onCancellationRequested(() => abort.abort());
          await installPrivateServer({
            basePython: python,
            extensionPath: this.context.extensionPath,
            globalStoragePath: this.context.globalStorageUri.fsPath,
            installSource: cfg.get<string>("server.installSource"),
            signal: abort.signal,
            reporter: { step: (message) => progress.report({ message }), log: (line) => this.log.info(`[install] ${line}`) },
          });
        },
      );
      void vscode.window.showInformationMessage("Kestrel: the language server is installed.");
      await this.server.restart("installed");
    } catch (err) {
      const msg = err instanceof InstallError ? err.message : String((err as Error)?.message ?? err);
      this.log.error(`Install failed: ${msg}`);
      void vscode.window.showErrorMessage(`Kestrel: ${msg}`, "Show Logs").then((c) => this.server.onChoice(c));
    } finally {
      this.installing = false;
    }
  }
}
