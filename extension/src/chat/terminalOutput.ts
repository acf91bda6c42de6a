/**
 * `#terminal`: the last command a terminal ran and what it printed, for the chat ("why does this
 * fail?" after a test run). VS Code's shell integration reports each command line, streams its
 * output and gives its exit code; this keeps the last finished command of any terminal (its output's
 * last MAX_OUTPUT_CHARS, escape sequences removed). A terminal without shell integration reports
 * nothing, so there is nothing to attach and the picker does not offer it.
 */
import * as vscode from "vscode";
import { redactText } from "../redact";

export const MAX_OUTPUT_CHARS = 8_000;

export interface LastCommand {
  command: string;
  output: string;
  /** Characters of output before the kept tail (0: all of it is kept). */
  cut: number;
  exitCode: number | undefined;
  terminal: string;
}

// CSI (colours, cursor moves), OSC (titles, shell integration's own marks, links) and other escapes.
// eslint-disable-next-line no-control-regex
const ESCAPES = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;

/** Terminal output as text: escapes out, `\r\n` as `\n`, a line redrawn with `\r` as its last state. */
export function plainOutput(raw: string): string {
  return raw
    .replace(ESCAPES, "")
    .replace(/\r\n/g, "\n")
    .split("\n")
    .map((line) => line.slice(line.lastIndexOf("\r") + 1))
    .join("\n");
}

export class TerminalHistory implements vscode.Disposable {
  private lastCommand: LastCommand | undefined;
  private readonly reading = new Map<vscode.TerminalShellExecution, Promise<{ output: string; cut: number }>>();
  private readonly subscriptions: vscode.Disposable[];

  constructor() {
    this.subscriptions = [
      vscode.window.onDidStartTerminalShellExecution((e) => this.reading.set(e.execution, readTail(e.execution))),
      vscode.window.onDidEndTerminalShellExecution((e) => void this.ended(e)),
    ];
  }

  /** The last command that finished in any terminal, or undefined. */
  last(): LastCommand | undefined {
    return this.lastCommand;
  }

  private async ended(e: vscode.TerminalShellExecutionEndEvent): Promise<void> {
    const reading = this.reading.get(e.execution);
    this.reading.delete(e.execution);
    const { output, cut } = reading ? await reading : { output: "", cut: 0 };
    const command = e.execution.commandLine.value.trim();
    if (!command) return; // an empty prompt line (Enter alone)
    this.lastCommand = { command, output, cut, exitCode: e.exitCode, terminal: e.terminal.name };
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.reading.clear();
  }
}

/** The execution's output as it streams, keeping its last MAX_OUTPUT_CHARS (a long build log's end is what matters). */
async function readTail(execution: vscode.TerminalShellExecution): Promise<{ output: string; cut: number }> {
  let raw = "";
  let dropped = 0;
  try {
    for await (const data of execution.read()) {
      raw += data;
      if (raw.length > 4 * MAX_OUTPUT_CHARS) {
        dropped += raw.length - 2 * MAX_OUTPUT_CHARS;
        raw = raw.slice(-2 * MAX_OUTPUT_CHARS);
      }
    }
  } catch {
    // the terminal closed while it ran: what arrived is kept
  }
  // Keys a command printed (`env`, a failing request's echo) are not the model's to read.
  const text = redactText(plainOutput(raw), []).trimEnd();
  const kept = text.slice(-MAX_OUTPUT_CHARS);
  return { output: kept, cut: dropped + text.length - kept.length };
}

/** The attachment's text and its label on the turn. */
export function describeLast(last: LastCommand): { title: string; body: string; label: string } {
  const exit = last.exitCode === undefined ? "" : `, exit code ${last.exitCode}`;
  const cut = last.cut ? ` (its last ${last.output.length} characters)` : "";
  return {
    title: `The last command run in the terminal "${last.terminal}"${exit}, and its output${cut}`,
    body: `$ ${last.command}\n${last.output || "(no output reached Kestrel: none, or printed before the terminal reported the command)"}`,
    label: `terminal: ${last.command.length > 40 ? `${last.command.slice(0, 39)}…` : last.command}`,
  };
}
