// API key: "Kestrel: Set API Key" -> SecretStorage -> server -> the model's Authorization header
// (seen by a recording proxy put in front of the mock).
import { API_KEY } from "../lib/config.mjs";
import { authRecordingProxy } from "../lib/mock.mjs";
import { log, sleep, waitFor } from "../lib/util.mjs";

export default async function apiKey(t) {
  const { page, editor, results } = t;
  const proxy = (t.proxy = await authRecordingProxy(t.mockUrl));
  await page.keyboard.press("Control+Shift+P");
  await page.locator(".quick-input-widget input").waitFor({ state: "visible" });
  await page.keyboard.type("Kestrel: Set API Key");
  await page.locator(".quick-input-list .monaco-list-row", { hasText: "Set API Key" }).first().waitFor();
  await page.keyboard.press("Enter");
  await page.locator(".quick-input-widget input[type=password]").waitFor({ state: "visible" });
  await page.keyboard.type(API_KEY);
  await page.keyboard.press("Enter");
  await page.locator(".quick-input-widget").waitFor({ state: "hidden" });
  t.writeSettings({ ...t.settings, "kestrel.baseUrl": proxy.url });
  await editor.locator(".view-lines").click();
  await page.keyboard.press("Control+End");
  await waitFor("a completion through the recording proxy", async () => {
    await page.keyboard.press("Enter");
    await page.keyboard.type("z = ");
    await sleep(300);
    return proxy.seen.some((h) => h === `Bearer ${API_KEY}`);
  }, 60_000, 500);
  results.checks.apiKeyReachedModel = true;
  results.checks.authorizationSeenByModel = [...new Set(proxy.seen.map((h) => h.replace(API_KEY, "<the key>") || "(none)"))];
  log("the API key from SecretStorage reached the model as a Bearer token");
}
