/**
 * The LanguageClient for one server process: `kestrel-lsp` over stdio, its stderr parsed into the
 * log's levels, every document scheme that can hold code, and the features' middleware.
 */
import type * as vscode from "vscode";
import {
  ErrorAction,
  LanguageClient,
  RevealOutputChannelOn,
  type CloseHandlerResult,
  type LanguageClientOptions,
  type Message,
  type Middleware,
  type ServerOptions,
} from "vscode-languageclient/node";
import * as readline from "node:readline";
import { parseServerLogLine } from "./redact";
import type { Launch } from "./serverCommand";
import { serverSpawnOptions } from "./serverProcess";

export interface ClientHooks {
  log: vscode.LogOutputChannel;
  /** Called at each (re)start of the process: the `initializationOptions` to send. */
  initializationOptions: () => unknown;
  middleware: Middleware;
  /** The connection closed: restart or not. */
  closed: () => CloseHandlerResult;
  /** Every message from the server passes here before anything reads or shows it (redact.ts). */
  redact?: (message: Message) => Message;
}

export function createLanguageClient(launch: Launch, hooks: ClientHooks): LanguageClient {
  const serverOptions: ServerOptions = {
    command: launch.command,
    args: launch.args,
    // In the bundle's own folder (extension/dist), never the workspace folder: see serverProcess.ts.
    options: serverSpawnOptions(__dirname),
  };
  const redact = hooks.redact;
  const clientOptions: LanguageClientOptions = {
    // Inline completions in any language, in files and unsaved editors.
    documentSelector: [{ scheme: "file" }, { scheme: "untitled" }, { scheme: "vscode-notebook-cell" }],
    outputChannel: hooks.log,
    traceOutputChannel: hooks.log,
    revealOutputChannelOn: RevealOutputChannelOn.Never, // the status bar and notifications report problems
    stdioOptions: {
      stdout: (input, channel) => pipeLines(input, (l) => channel.info(l)),
      stderr: (input, channel) =>
        pipeLines(input, (line) => {
          const { level, text } = parseServerLogLine(line);
          channel[level](text);
        }),
    },
    initializationOptions: hooks.initializationOptions,
    middleware: hooks.middleware,
    connectionOptions: redact ? { messageStrategy: { handleMessage: (message, next) => next(redact(message)) } } : undefined,
    errorHandler: {
      error: () => ({ action: ErrorAction.Continue, handled: true }),
      closed: hooks.closed,
    },
  };
  return new LanguageClient("kestrel", "Kestrel", serverOptions, clientOptions);
}

function pipeLines(input: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  readline.createInterface({ input, crlfDelay: Infinity, terminal: false, historySize: 0 }).on("line", onLine);
}
