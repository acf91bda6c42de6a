/** The "Kestrel" status bar item: the client's phase and the server's `kestrel/status`, drawn by statusView. */
import * as vscode from "vscode";
import { isLanguageEnabled, type ClientGates } from "./settings";
import { viewStatus, type ClientPhase, type KestrelStatus } from "./statusView";

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly disposables: vscode.Disposable[];
  private currentPhase: ClientPhase = "starting";
  private currentStatus: KestrelStatus | undefined;
  private readonly statusChanged = new vscode.EventEmitter<KestrelStatus | undefined>();
  /** The server's status changed or went away (the chat header shows its provider and model). */
  readonly onDidChangeStatus = this.statusChanged.event;

  constructor(private readonly gates: () => ClientGates) {
    this.item = vscode.window.createStatusBarItem("kestrel.status", vscode.StatusBarAlignment.Right, 100);
    this.item.name = "Kestrel";
    this.item.command = "kestrel.showMenu";
    this.render();
    this.item.show();
    this.disposables = [this.item, this.statusChanged, vscode.window.onDidChangeActiveTextEditor(() => this.render())];
  }

  get phase(): ClientPhase {
    return this.currentPhase;
  }

  /** The server's last `kestrel/status` (undefined while no server runs). */
  get status(): KestrelStatus | undefined {
    return this.currentStatus;
  }

  setPhase(phase: ClientPhase): void {
    this.currentPhase = phase;
    this.render();
  }

  setStatus(status: KestrelStatus): void {
    this.currentStatus = status;
    this.render();
    this.statusChanged.fire(status);
  }

  /** The server is gone: drop its status (shown again at the next render). */
  forgetStatus(): void {
    this.currentStatus = undefined;
    this.statusChanged.fire(undefined);
  }

  render(): void {
    const gates = this.gates();
    const language = vscode.window.activeTextEditor?.document.languageId;
    const view = viewStatus({
      phase: this.currentPhase,
      status: this.currentStatus,
      enabled: gates.enabled,
      languageDisabled: language !== undefined && !isLanguageEnabled(gates.languages, language),
    });
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.accessibilityInformation = { label: view.text.replace(/\$\([^)]*\)\s*/g, ""), role: "button" };
    this.item.backgroundColor =
      view.background === "error"
        ? new vscode.ThemeColor("statusBarItem.errorBackground")
        : view.background === "warning"
          ? new vscode.ThemeColor("statusBarItem.warningBackground")
          : undefined;
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
