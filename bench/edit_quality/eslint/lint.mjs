// The eval's ESLint, kept running: one JSON request per stdin line, {id, filePath, text}, one answer per
// stdout line, {id, messages} (ESLint's own message objects: ruleId, message, line, column, endLine,
// endColumn, fix, fatal). Rules: ESLint's and typescript-eslint's recommended sets (no type information)
// plus the rules the quick-fix set draws its tasks from (see bench/edit_quality/eslint_set.py).
// Usage: node lint.mjs <cwd: the directory the file paths are relative to>
import { createInterface } from "node:readline";
import js from "@eslint/js";
import { ESLint } from "eslint";
import tseslint from "typescript-eslint";

export const TASK_RULES = { "prefer-const": "error", "prefer-template": "error", "curly": "error" };

const eslint = new ESLint({
  cwd: process.argv[2] ?? process.cwd(),
  overrideConfigFile: true,
  overrideConfig: tseslint.config(js.configs.recommended, ...tseslint.configs.recommended, { rules: TASK_RULES }),
});

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  const { id, filePath, text } = JSON.parse(line);
  let answer;
  try {
    const [result] = await eslint.lintText(text, { filePath, warnIgnored: true });
    answer = { id, messages: result ? result.messages : [] };
  } catch (err) {
    answer = { id, error: String(err && err.message ? err.message : err) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
}
