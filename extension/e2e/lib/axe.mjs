// axe-core (the accessibility engine) run inside the chat webview's own document, and that
// document as a playwright Frame (for scenarios that need to measure in the page itself).
import { createRequire } from "node:module";
import { waitFor } from "./util.mjs";

const require = createRequire(import.meta.url);
/** axe-core's browser bundle as one script (devDependency of the repository, pinned). */
const AXE = require("axe-core");

/**
 * The chat webview's inner document (VS Code nests it in two iframes of another origin). Found by
 * its content, not by frame order: other webviews may exist, and a reload creates new frames.
 */
export function chatWebviewFrame(page, timeout = 30_000) {
  return waitFor("the chat webview's document (#transcript and #input)", async () => {
    for (const frame of page.frames()) {
      const isChat = await frame
        .evaluate(() => Boolean(document.getElementById("transcript") && document.getElementById("input")))
        .catch(() => false);
      if (isChat) return frame;
    }
    return undefined;
  }, timeout, 200);
}

/**
 * Loads axe into `frame` once. The webview's Content-Security-Policy allows only its own nonce'd
 * script, so a <script> tag (frame.addScriptTag) is refused; evaluating the source through the
 * DevTools protocol is not subject to the page's CSP.
 */
async function loadAxe(frame) {
  if (await frame.evaluate(() => typeof window.axe === "object")) return;
  await frame.evaluate(`${AXE.source}\n;undefined`);
  if (!(await frame.evaluate(() => typeof window.axe === "object"))) throw new Error("axe-core did not load in the chat webview");
}

/**
 * Runs axe on the whole document of `frame`. Returns every violation, reduced to what a fix needs:
 * rule, impact, help, and per element its selector, HTML and axe's data (for colour contrast:
 * fgColor, bgColor, contrastRatio, expectedContrastRatio, fontSize, fontWeight); and, per rule, the
 * elements axe could not decide ("incomplete", e.g. text over an image: a person must look).
 */
export async function axeScan(frame) {
  await loadAxe(frame);
  return frame.evaluate(async () => {
    const result = await window.axe.run(document, { resultTypes: ["violations"] });
    return {
      violations: result.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.map((n) => ({
          target: n.target.join(" "),
          html: n.html.slice(0, 300),
          summary: n.failureSummary,
          data: [...n.any, ...n.all, ...n.none].map((c) => c.data).find((d) => d && typeof d === "object") ?? null,
        })),
      })),
      incomplete: Object.fromEntries(result.incomplete.map((r) => [r.id, r.nodes.map((n) => n.target.join(" "))])),
    };
  });
}

/** The violations that fail a check: impact serious or critical. */
export const severe = (violations) => violations.filter((v) => v.impact === "serious" || v.impact === "critical");
