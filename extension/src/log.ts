/** The "Kestrel" output channel (client, server stderr, LSP trace), with secrets redacted. */
import * as vscode from "vscode";
import type { Redactor } from "./redact";

export function createLog(redactor: Redactor): vscode.LogOutputChannel {
  return redactingChannel(vscode.window.createOutputChannel("Kestrel", { log: true }), redactor);
}

/** A LogOutputChannel that redacts secrets from everything written to it. */
function redactingChannel(inner: vscode.LogOutputChannel, redactor: Redactor): vscode.LogOutputChannel {
  const wrapped = new Set(["trace", "debug", "info", "warn", "error", "append", "appendLine", "replace"]);
  return new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof prop === "string" && wrapped.has(prop) && typeof value === "function") {
        return (first: unknown, ...rest: unknown[]) =>
          (value as (...a: unknown[]) => unknown).call(
            target,
            typeof first === "string" ? redactor.redact(first) : first instanceof Error ? redactor.redact(first.stack ?? first.message) : first,
            ...rest.map((r) => (typeof r === "string" ? redactor.redact(r) : r)),
          );
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
