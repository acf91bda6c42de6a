/** The text of "Kestrel: Show Completion Context" (no vscode import: unit-tested as is). */
import type { CompletionContext } from "./protocol";

/** One line a person can read: the file, then each defining file with its names, in prompt order. */
export function describeContext(c: CompletionContext): string {
  if (!c.enabled) return "Repository context is off (kestrel.completion.repositoryContext).";
  if (!c.path || c.definitions.length === 0) {
    return "No definitions from other files were sent with the last completion.";
  }
  const byFile = new Map<string, string[]>();
  for (const d of c.definitions) byFile.set(d.path, [...(byFile.get(d.path) ?? []), d.name]);
  const parts = [...byFile].map(([file, names]) => `${names.join(", ")} from ${file}`);
  return `Last completion in ${c.path} was sent: ${parts.join("; ")} (${c.chars} characters).`;
}
