/**
 * Workspace trust: in an untrusted workspace, nothing of it goes to a model before the user says so.
 *
 * Every way code reaches the model passes this one gate:
 *   - the LSP requests vscode-languageclient sends: inline completions (InlineCompletions asks
 *     `mayUseCode`), `codeAction/resolve` ("Fix with Kestrel") and `workspace/executeCommand` for
 *     the server's commands (`kestrel.fix`, `kestrel.explain`): the middleware below;
 *   - Kestrel's own `kestrel/*` requests (chat, edit, nextEdit, steer): every feature talks to the
 *     server through `guardClient`, which lets through without asking only the requests in
 *     CODE_FREE_REQUESTS. A new request is asked for by default: a new feature cannot forget.
 * The open documents' text also reaches the local kestrel-lsp process (didOpen/didChange), but the
 * server calls a model only when one of the requests above arrives.
 */
import * as vscode from "vscode";
import type { Middleware } from "vscode-languageclient/node";
import type { ChatClient } from "./chat/chatView";

/** Who started a request: the user (a command, Enter, a click) or the editor (typing, a timer). */
export type Trigger = "explicit" | "automatic";

/** `kestrel/*` requests that carry nothing from the workspace: sent without asking. */
export const CODE_FREE_REQUESTS: ReadonlySet<string> = new Set(["kestrel/stopChat", "kestrel/getStatus", "kestrel/diagnostics", "kestrel/completionContext"]);
/** `kestrel/*` requests the editor sends on its own (not in reply to a command). */
export const AUTOMATIC_REQUESTS: ReadonlySet<string> = new Set(["kestrel/nextEdit"]);

export const ALLOW = "Allow for this session";
export const NOT_NOW = "Not now";
export const QUESTION = "Kestrel: this workspace is not trusted. Send its code to the model?";

/** A request that was not sent because the user did not allow it. */
export class TrustDeclined extends Error {
  constructor(readonly method: string) {
    super("nothing was sent to the model: this workspace is not trusted");
  }
}

/** The two things the gate needs from VS Code (replaced in the unit tests). */
export interface TrustUi {
  isTrusted(): boolean;
  /** Ask the user; resolves to the button chosen (undefined when the message was closed). */
  ask(): Thenable<string | undefined>;
}

const vscodeUi: TrustUi = {
  isTrusted: () => vscode.workspace.isTrusted,
  ask: () => vscode.window.showWarningMessage(QUESTION, ALLOW, NOT_NOW),
};

export class WorkspaceTrustGate {
  private allowed = false;
  /** "Not now" (or closed): automatic requests stay quiet for the session; a command asks again. */
  private declined = false;
  private asking: Promise<boolean> | undefined;

  constructor(private readonly ui: TrustUi = vscodeUi) {}

  /** True in a trusted workspace, or once the user allowed it for this session; else asks (one question at a time). */
  readonly mayUseCode = (trigger: Trigger = "automatic"): Promise<boolean> => {
    if (this.allowedNow()) return Promise.resolve(true);
    if (trigger === "automatic" && this.declined) return Promise.resolve(false);
    this.asking ??= Promise.resolve(this.ui.ask())
      .then((choice) => choice === ALLOW, () => false)
      .then((yes) => {
        this.allowed = yes;
        this.declined = !yes;
        this.asking = undefined;
        return yes;
      });
    return this.asking;
  };

  /** Code may go to the model now without a question (what a feature that must never ask checks). */
  readonly allowedNow = (): boolean => this.ui.isTrusted() || this.allowed;

  /** Client middleware: a quick fix is only resolved (and the model called) with consent. */
  readonly resolveCodeAction: NonNullable<Middleware["resolveCodeAction"]> = async (item, token, next) =>
    (await this.mayUseCode("explicit")) ? next(item, token) : item;

  /** Client middleware around `inner`: the server's commands (`kestrel.fix`, `kestrel.explain`) run only with consent. */
  guardCommands(inner: NonNullable<Middleware["executeCommand"]>): NonNullable<Middleware["executeCommand"]> {
    return async (command, args, next) => ((await this.mayUseCode("explicit")) ? inner(command, args, next) : undefined);
  }

  /** The client the features use: `kestrel/*` requests that can carry code wait for consent, and are not sent without it. */
  guardClient(client: () => ChatClient | undefined): () => ChatClient | undefined {
    return () => {
      const c = client();
      if (!c) return undefined;
      return {
        sendRequest: async <R>(method: string, params: unknown): Promise<R> => {
          if (!CODE_FREE_REQUESTS.has(method)) {
            const trigger: Trigger = AUTOMATIC_REQUESTS.has(method) ? "automatic" : "explicit";
            if (!(await this.mayUseCode(trigger))) throw new TrustDeclined(method);
          }
          return c.sendRequest<R>(method, params);
        },
        onNotification: (method, handler) => c.onNotification(method, handler),
      };
    };
  }
}
