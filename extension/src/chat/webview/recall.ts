/**
 * ↑/↓ in the chat input go back and forth through this conversation's prompts, as in a shell.
 * ↑ recalls only from an empty input or one still showing a recalled prompt: once the user edits
 * the text, the arrows move the caret again.
 */
export class PromptRecall {
  /** How many prompts back the input shows (0: none recalled). */
  private back = 0;
  private shown: string | undefined;

  constructor(private readonly prompts: () => string[]) {}

  /** ↑: the text to put in the input, or undefined to leave the key to the textarea. */
  up(value: string): string | undefined {
    const list = this.prompts();
    if (!list.length) return undefined;
    if (value === "") this.back = 1;
    else if (this.back > 0 && value === this.shown) this.back = Math.min(this.back + 1, list.length);
    else return undefined;
    return (this.shown = list[list.length - this.back]);
  }

  /** ↓: the newer prompt, "" past the newest, or undefined when nothing is being recalled. */
  down(value: string): string | undefined {
    if (this.back === 0 || value !== this.shown) return undefined;
    this.back -= 1;
    const list = this.prompts();
    this.shown = this.back > 0 ? list[list.length - this.back] : undefined;
    return this.shown ?? "";
  }

  /** A prompt was sent or the conversation changed: the next ↑ starts from the newest again. */
  reset(): void {
    this.back = 0;
    this.shown = undefined;
  }
}
