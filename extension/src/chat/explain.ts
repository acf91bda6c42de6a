/** "Explain with Kestrel" (a server code action) opens its answer in the chat panel instead of a notification. */
import type { Middleware } from "vscode-languageclient/node";
import type { ChatViewProvider } from "./chatView";

export function explainInChat(chat: ChatViewProvider): NonNullable<Middleware["executeCommand"]> {
  return async (command, args, next) => {
    if (command === "kestrel.explain") return chat.explain(args[0]);
    return next(command, args);
  };
}
