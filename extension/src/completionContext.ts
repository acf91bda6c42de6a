/** "Kestrel: Show Completion Context": what the last completion prompt was given from other files. */
import * as vscode from "vscode";
import { describeContext } from "./contextView";
import { request, type KestrelConnection } from "./protocol";

export async function showCompletionContext(
  client: Pick<KestrelConnection<unknown>, "sendRequest"> | undefined,
  log: vscode.LogOutputChannel,
): Promise<void> {
  if (!client) {
    void vscode.window.showWarningMessage("Kestrel: the server is not running.");
    return;
  }
  const text = describeContext(await request(client, "kestrel/completionContext", {}));
  log.info(text);
  void vscode.window.showInformationMessage(`Kestrel: ${text}`);
}
