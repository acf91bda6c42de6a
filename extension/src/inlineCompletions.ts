/**
 * Inline completions come from vscode-languageclient's built-in `textDocument/inlineCompletion`
 * support; this is the glue around it: the client-side gates (enabled / per language / debounce),
 * workspace trust, the round-trip statistics in the log, and the on/off toggle.
 */
import * as vscode from "vscode";
import type { Trigger } from "./trust";
import type { Middleware } from "vscode-languageclient/node";
import { config, updateSetting } from "./config";
import { debounce } from "./debounce";
import { RollingStats } from "./latency";
import { readGates, shouldComplete, type ClientGates } from "./settings";

export class InlineCompletions {
  private current: ClientGates = readGates(config());
  private readonly roundTrips = new RollingStats(25);

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly mayUseCode: (trigger?: Trigger) => Promise<boolean>,
    /** The gates changed (the status bar shows them). */
    private readonly onGatesChanged: () => void,
  ) {}

  get gates(): ClientGates {
    return this.current;
  }

  /** Re-read the gates after a settings change (the caller re-renders). */
  reloadGates(): void {
    this.current = readGates(config());
  }

  /** Client middleware around `textDocument/inlineCompletion`. */
  readonly provideInlineCompletionItems: NonNullable<Middleware["provideInlineCompletionItems"]> = async (
    document,
    position,
    context,
    token,
    next,
  ) => {
    if (!shouldComplete(this.current, document.languageId)) return null;
    const invoked = context.triggerKind === vscode.InlineCompletionTriggerKind.Invoke;
    if (!(await this.mayUseCode(invoked ? "explicit" : "automatic"))) return null;
    if (context.triggerKind === vscode.InlineCompletionTriggerKind.Automatic && this.current.debounceMs > 0) {
      if (!(await debounce(this.current.debounceMs, token))) return null;
    }
    const started = performance.now();
    const result = await next(document, position, context, token);
    if (!token.isCancellationRequested) this.recordRoundTrip(performance.now() - started);
    return result;
  };

  private recordRoundTrip(ms: number): void {
    const s = this.roundTrips.push(ms);
    if (s) {
      this.log.info(
        `inline completion round trip (extension host <-> server), last ${s.n}: p50 ${s.p50.toFixed(1)} ms, p95 ${s.p95.toFixed(1)} ms, max ${s.max.toFixed(1)} ms`,
      );
    }
  }

  /** "Kestrel: Toggle Inline Completions" (Ctrl+Alt+Shift+K, the status bar menu). */
  async toggle(): Promise<void> {
    const enabled = !this.current.enabled;
    await updateSetting("completion.enabled", enabled);
    this.current = { ...this.current, enabled };
    this.onGatesChanged();
    if (!enabled) void vscode.commands.executeCommand("editor.action.inlineSuggest.hide");
    vscode.window.setStatusBarMessage(`Kestrel: inline completions ${enabled ? "on" : "off"}`, 2500);
  }
}
