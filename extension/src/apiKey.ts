/**
 * The model provider's API key: kept in VS Code's SecretStorage (never in settings or logs), cached
 * for the server's initializationOptions, added to the log redactor, and set/cleared by commands.
 */
import * as vscode from "vscode";
import { config } from "./config";
import type { Redactor } from "./redact";

const SECRET_KEY = "kestrel.apiKey";

export class ApiKey implements vscode.Disposable {
  private cached: string | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly disposables: vscode.Disposable[];
  /** Fires when the stored key is now different (set, replaced or removed, in this window or another). */
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly redactor: Redactor,
  ) {
    this.disposables = [
      this.changed,
      secrets.onDidChange((e) => {
        if (e.key === SECRET_KEY) void this.reload();
      }),
    ];
  }

  /** The stored key (as of the last load), if any. */
  get value(): string | undefined {
    return this.cached;
  }

  async load(): Promise<void> {
    this.cached = (await this.secrets.get(SECRET_KEY)) || undefined;
    this.redactor.add(this.cached);
  }

  private async reload(): Promise<void> {
    const previous = this.cached;
    await this.load();
    if (previous !== this.cached) this.changed.fire();
  }

  /** "Kestrel: Set API Key". */
  async prompt(): Promise<void> {
    const provider = config().get<string>("provider") || "the model provider";
    const key = await vscode.window.showInputBox({
      title: "Kestrel: Set API Key",
      prompt: `API key for ${provider}. Stored in VS Code's secret storage, never in settings or logs.`,
      password: true,
      ignoreFocusOut: true,
      placeHolder: "sk-…",
      validateInput: (v) => (v.trim().length < 4 ? "Enter the API key" : undefined),
    });
    if (!key) return;
    this.redactor.add(key.trim());
    await this.secrets.store(SECRET_KEY, key.trim());
    void vscode.window.showInformationMessage("Kestrel: API key saved in secret storage.");
  }

  /** "Kestrel: Clear API Key". */
  async clear(): Promise<void> {
    await this.secrets.delete(SECRET_KEY);
    void vscode.window.showInformationMessage("Kestrel: API key removed.");
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
