/**
 * The server's questions (`window/showMessageRequest`) as modal dialogs. Kestrel's server asks only
 * what blocks work until it is answered (the agent asking to run a command): a toast can slide into
 * the notification centre unseen and leave the run waiting, and the command must be read before it
 * runs. A question's first paragraph is the dialog's title, the rest its detail (the command).
 */
import * as vscode from "vscode";
// Types only: the unit tests load this with a fake `vscode`, which vscode-languageclient cannot run on.
import type { MessageActionItem, ShowMessageRequestParams } from "vscode-languageclient/node";

const ERROR = 1; // MessageType.Error
const WARNING = 2; // MessageType.Warning

export async function askModally(params: ShowMessageRequestParams): Promise<MessageActionItem | null> {
  const [title, ...rest] = params.message.split("\n\n");
  const detail = rest.join("\n\n") || undefined;
  const actions = params.actions ?? [];
  const show =
    params.type === ERROR
      ? vscode.window.showErrorMessage
      : params.type === WARNING
        ? vscode.window.showWarningMessage
        : vscode.window.showInformationMessage;
  // VS Code adds Cancel to a modal: it answers null, as closing a notification does.
  const choice = await show(title, { modal: true, detail }, ...actions.map((a) => a.title));
  return actions.find((a) => a.title === choice) ?? null;
}
