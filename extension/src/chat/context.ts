/** Context chips → text for the model. Secret files are never attached (same rules as the server). */
import * as vscode from "vscode";
import type { Chip } from "./protocol";
import { isSecretPath } from "../secretFiles";

const MAX_FILE_CHARS = 20_000;

function fence(label: string, body: string, lang = ""): string {
  return `${label}:\n\`\`\`${lang}\n${body}\n\`\`\``;
}

export function contextBlock(kinds: Chip["kind"][]): { text: string; labels: string[] } {
  const editor = vscode.window.activeTextEditor;
  const parts: string[] = [];
  const labels: string[] = [];
  const doc = editor?.document;
  const usable = doc && !isSecretPath(doc.uri.path);
  if (kinds.includes("selection") && editor && usable && !editor.selection.isEmpty) {
    const s = editor.selection;
    parts.push(fence(`Selected lines ${s.start.line + 1}-${s.end.line + 1} of ${vscode.workspace.asRelativePath(doc.uri)}`, doc.getText(s), doc.languageId));
    labels.push("selection");
  }
  if (kinds.includes("file") && usable) {
    parts.push(fence(`File ${vscode.workspace.asRelativePath(doc.uri)}`, doc.getText().slice(0, MAX_FILE_CHARS), doc.languageId));
    labels.push("file");
  }
  if (kinds.includes("openFiles")) {
    const others = vscode.window.visibleTextEditors.map((e) => e.document).filter((d) => d !== doc && !isSecretPath(d.uri.path));
    for (const d of others.slice(0, 5)) parts.push(fence(`Open file ${vscode.workspace.asRelativePath(d.uri)}`, d.getText().slice(0, 4000), d.languageId));
    if (others.length) labels.push("open files");
  }
  if (kinds.includes("diagnostics") && doc && usable) {
    const diags = vscode.languages.getDiagnostics(doc.uri).slice(0, 20);
    if (diags.length) {
      parts.push(`Diagnostics in ${vscode.workspace.asRelativePath(doc.uri)}:\n` + diags.map((d) => `- line ${d.range.start.line + 1}: ${d.message}`).join("\n"));
      labels.push("diagnostics");
    }
  }
  return { text: parts.join("\n\n"), labels };
}
