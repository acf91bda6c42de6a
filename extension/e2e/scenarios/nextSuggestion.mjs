// The next suggestion, prepared while the user reads the one shown (completion.prepareNext, on by
// default): in main.py the model is asked for what follows the ghost text before Tab is pressed, and
// after Tab the next ghost text comes from that request, with no request made after the accept.
import * as fs from "node:fs";
import { COMPLETION } from "../lib/config.mjs";
import { setMock } from "../lib/mock.mjs";
import { httpGet, log, waitFor } from "../lib/util.mjs";

const FIRST = "compute(1)"; // names main.py binds (the name guard hides others)
const NEXT = " + compute(2)";

/** The inline-completion requests the mock received (their messages, JSON text), oldest first. */
async function completionRequests(mockUrl) {
  const stats = JSON.parse((await httpGet(`${mockUrl.replace(/\/v1$/, "")}/_mock/stats`)).body);
  return stats.request_log
    .map((r) => JSON.stringify(r.body?.messages ?? []))
    .filter((m) => m.includes("code completion engine"));
}

export default async function nextSuggestion(t) {
  const { page, results, mockUrl, ghostText, noGhost } = t;
  await setMock(mockUrl, { text: `${FIRST}\n`, tps: 0, ttft_ms: 0, rules: [{ match: `z = ${FIRST}`, text: `${NEXT}\n` }] });
  await page.keyboard.press("Control+End");
  await page.keyboard.press("Enter");
  await page.keyboard.type("z = ");
  await waitFor(`ghost text '${FIRST}'`, async () => (await ghostText()) === FIRST, 60_000, 50);
  // Prepared before the accept: a request whose document already holds the suggestion.
  await waitFor("the request for what follows the ghost text", async () =>
    (await completionRequests(mockUrl)).some((m) => m.includes(`z = ${FIRST}`)), 20_000, 50);
  const asked = (await completionRequests(mockUrl)).length;
  const pressed = Date.now();
  await page.keyboard.press("Tab");
  await waitFor(`ghost text '${NEXT}' after Tab`, async () => (await ghostText()) === NEXT, 20_000, 10);
  const visibleMs = Date.now() - pressed;
  // Requests after Tab may only prepare the suggestion after this one (the document then holds both).
  const later = (await completionRequests(mockUrl)).slice(asked);
  const asNew = later.filter((m) => !m.includes(`z = ${FIRST}${NEXT}`));
  if (asNew.length) throw new Error(`the next ghost text cost a request after Tab (it was not the prepared one): ${asNew[0].slice(-400)}`);
  results.checks.nextSuggestion = `'${NEXT}' shown ${visibleMs} ms after Tab, from the request made before it`;
  log("next suggestion:", results.checks.nextSuggestion);
  await page.keyboard.press("Escape");
  await noGhost();
  await page.keyboard.press("Control+S");
  await waitFor("main.py on disk with the accepted suggestion only", () =>
    /\nz = compute\(1\)\n?$/.test(fs.readFileSync(t.mainPy, "utf8")), 20_000, 100);
  await setMock(mockUrl, { text: `${COMPLETION}\n`, tps: 0, ttft_ms: 0, rules: [] }); // as the next scenarios expect
}
