/** Workspace trust: in an untrusted workspace, ask once before any of its code goes to a model. */
import * as vscode from "vscode";
import type { Middleware } from "vscode-languageclient/node";

export class WorkspaceTrustGate {
  private untrustedAnswer: Promise<boolean> | undefined;

  readonly mayUseCode = (): Promise<boolean> => {
    if (vscode.workspace.isTrusted) return Promise.resolve(true);
    this.untrustedAnswer ??= Promise.resolve(
      vscode.window.showWarningMessage(
        "Kestrel: this workspace is not trusted. Send its code to the model for completions and fixes?",
        "Allow for this session",
        "Not now",
      ),
    ).then((choice) => choice === "Allow for this session");
    return this.untrustedAnswer;
  };

  /** Client middleware: a quick fix is only resolved (and the model called) with consent. */
  readonly resolveCodeAction: NonNullable<Middleware["resolveCodeAction"]> = async (item, token, next) =>
    (await this.mayUseCode()) ? next(item, token) : item;
}
