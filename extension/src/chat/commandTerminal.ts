import * as vscode from "vscode";

/**
 * The terminals "Run in terminal" sends a confirmed command to. A command is typed into a terminal Kestrel
 * opened only while that terminal's shell is known to sit at its prompt: typed into a program the user
 * started there (ssh to another host, a Python REPL, a password prompt) it would run somewhere the dialog
 * did not say, or be read as that program's input. VS Code's shell integration reports each command's
 * start and end; a terminal without it (a shell it does not support, or not yet started), or with a command
 * still running, is never reused: the command gets a terminal of its own.
 */
export class CommandTerminals implements vscode.Disposable {
  private readonly ours = new Set<vscode.Terminal>();
  private readonly running = new Set<vscode.Terminal>();
  private readonly subscriptions: vscode.Disposable[];

  constructor() {
    this.subscriptions = [
      vscode.window.onDidStartTerminalShellExecution((e) => this.running.add(e.terminal)),
      vscode.window.onDidEndTerminalShellExecution((e) => this.running.delete(e.terminal)),
      vscode.window.onDidCloseTerminal((t) => {
        this.ours.delete(t);
        this.running.delete(t);
      }),
    ];
  }

  /** Types `command` into an idle Kestrel terminal, or a new one, and shows it. */
  run(command: string): vscode.Terminal {
    const terminal = this.idle() ?? this.open();
    terminal.show();
    terminal.sendText(command, true);
    return terminal;
  }

  private idle(): vscode.Terminal | undefined {
    return [...this.ours].find((t) => t.exitStatus === undefined && t.shellIntegration !== undefined && !this.running.has(t));
  }

  private open(): vscode.Terminal {
    const terminal = vscode.window.createTerminal({ name: "Kestrel", cwd: vscode.workspace.workspaceFolders?.[0]?.uri });
    this.ours.add(terminal);
    return terminal;
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }
}
