// Keystroke -> ghost text latency: each sample types one key that needs a new completion, and the
// page itself timestamps the keydown, the ghost text's arrival and the next frame.
import { COMPLETION, SAMPLES } from "../lib/config.mjs";
import { log, percentile, sleep } from "../lib/util.mjs";

export default async function latency(t) {
  const { page, results, noGhost } = t;
  await page.evaluate(() => {
    const w = window;
    w.__kestrelArm = (expected) => {
      const st = (w.__kestrel = { key: 0, ghost: 0, frame: 0 });
      const text = () =>
        Array.from(document.querySelectorAll(".monaco-editor .ghost-text-decoration, .monaco-editor .ghost-text-decoration-preview"))
          .map((e) => e.textContent)
          .join("")
          .replace(/\u00a0/g, " ");
      const onKey = (e) => {
        if (!st.key) st.key = e.timeStamp;
        window.removeEventListener("keydown", onKey, true);
      };
      window.addEventListener("keydown", onKey, true);
      const obs = new MutationObserver(() => {
        if (!st.key || st.ghost || text() !== expected) return;
        st.ghost = performance.now();
        obs.disconnect();
        requestAnimationFrame(() => (st.frame = performance.now()));
      });
      obs.observe(document.querySelector(".monaco-workbench"), { subtree: true, childList: true, characterData: true });
    };
  });
  for (let i = 0; i < SAMPLES; i++) {
    await page.keyboard.press("End");
    await page.keyboard.press("Enter");
    await page.keyboard.type(`v${i} =`);
    await sleep(150); // let the completions for the characters above arrive...
    await page.keyboard.press("Escape"); // ...and hide them
    await noGhost();
    await sleep(100);
    await page.evaluate((e) => window.__kestrelArm(e), COMPLETION);
    await page.keyboard.press("Space");
    await page.waitForFunction(() => window.__kestrel.ghost > 0, null, { timeout: 30_000, polling: "raf" });
    await page.waitForFunction(() => window.__kestrel.frame > 0, null, { timeout: 5_000, polling: "raf" });
    const st = await page.evaluate(() => window.__kestrel);
    results.samples.push({ ghostMs: +(st.ghost - st.key).toFixed(1), paintedMs: +(st.frame - st.key).toFixed(1) });
    await page.keyboard.press("Escape");
  }
  const ghostMs = results.samples.map((s) => s.ghostMs).sort((a, b) => a - b);
  const paintedMs = results.samples.map((s) => s.paintedMs).sort((a, b) => a - b);
  results.latency = {
    n: ghostMs.length,
    keystrokeToGhostMs: { p50: percentile(ghostMs, 50), p95: percentile(ghostMs, 95), min: ghostMs[0], max: ghostMs.at(-1) },
    keystrokeToNextFrameMs: { p50: percentile(paintedMs, 50), p95: percentile(paintedMs, 95) },
    debounceMs: 0,
  };
  log(`keystroke -> ghost text over ${ghostMs.length} samples: p50 ${results.latency.keystrokeToGhostMs.p50} ms, p95 ${results.latency.keystrokeToGhostMs.p95} ms`);
}
