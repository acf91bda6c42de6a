/**
 * The buttons of an answer's code blocks (Copy, Insert, Apply, Run in terminal) and "Apply all".
 * One click listener on the transcript serves every block, streamed or restored: a block's code,
 * language and file are read back from its element (markdown.ts writes them there).
 */
import type { CodeBlock, FromWebview } from "../protocol";
import { isShellLang } from "../codeBlocks";

/** The blocks "Apply all" sends: those naming a file (shell blocks are run, not applied), when they
 * name at least two distinct files; otherwise undefined (Apply on the block does the job). */
export function applyAllBlocks(blocks: CodeBlock[]): CodeBlock[] | undefined {
  const targeted = blocks.filter((b) => b.file && !isShellLang(b.lang));
  return new Set(targeted.map((b) => b.file)).size >= 2 ? targeted : undefined;
}

/** The CodeBlock an element of class `code-block` shows. */
export function blockOf(el: HTMLElement): CodeBlock {
  const block: CodeBlock = { code: el.querySelector("pre")?.textContent ?? "", lang: el.dataset.lang ?? "" };
  if (el.dataset.file) block.file = el.dataset.file;
  return block;
}

export const blocksIn = (root: HTMLElement) => Array.from(root.querySelectorAll<HTMLElement>(".code-block"), blockOf);

const COPIED_MS = 1500;

/** Handles a click inside the transcript if it hit a code block's button; returns whether it did. */
export function codeButtonClicked(target: EventTarget | null, post: (msg: FromWebview) => void, announce: (text: string) => void): boolean {
  const button = (target as HTMLElement | null)?.closest?.("button");
  const blockEl = button?.closest<HTMLElement>(".code-block");
  if (!button || !blockEl) return false;
  const block = blockOf(blockEl);
  if (button.classList.contains("code-copy")) {
    post({ type: "copy", code: block.code });
    button.textContent = "Copied";
    button.classList.add("copied");
    announce("Copied");
    setTimeout(() => {
      button.textContent = "Copy";
      button.classList.remove("copied");
    }, COPIED_MS);
  } else if (button.classList.contains("code-insert")) {
    post({ type: "insert", block });
  } else if (button.classList.contains("code-apply")) {
    post({ type: "apply", block });
  } else if (button.classList.contains("code-run")) {
    post({ type: "run", block });
  } else {
    return false;
  }
  return true;
}
