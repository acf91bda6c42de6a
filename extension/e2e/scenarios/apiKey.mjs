// API key: "Kestrel: Set API Key" -> SecretStorage -> server -> the model's Authorization header
// (seen by a recording proxy put in front of the mock). A key is stored for the provider and endpoint
// selected when it is entered, and goes nowhere else: pointing kestrel.baseUrl at another endpoint
// (what a workspace's settings.json could do) sends completions there without the key.
import { API_KEY } from "../lib/config.mjs";
import { typeUntil } from "../lib/editor.mjs";
import { authRecordingProxy } from "../lib/mock.mjs";
import { log, waitFor } from "../lib/util.mjs";

export default async function apiKey(t) {
  const { page, results } = t;
  const proxy = (t.proxy = await authRecordingProxy(t.mockUrl));
  // Select the endpoint first (the key is bound to it), and see completions go there.
  t.writeSettings({ ...t.settings, "kestrel.baseUrl": proxy.url });
  await typeUntil(t, "completions through the recording proxy", () => proxy.seen.length > 0);

  await page.keyboard.press("Control+Shift+P");
  await page.locator(".quick-input-widget input").waitFor({ state: "visible" });
  await page.keyboard.type("Kestrel: Set API Key");
  await page.locator(".quick-input-list .monaco-list-row", { hasText: "Set API Key" }).first().waitFor();
  await page.keyboard.press("Enter");
  await page.locator(".quick-input-widget input[type=password]").waitFor({ state: "visible" });
  await page.keyboard.type(API_KEY);
  await page.keyboard.press("Enter");
  await page.locator(".quick-input-widget").waitFor({ state: "hidden" });
  await typeUntil(t, "the key at the recording proxy", () => proxy.seen.some((h) => h === `Bearer ${API_KEY}`));
  results.checks.apiKeyReachedModel = true;
  results.checks.authorizationSeenByModel = [...new Set(proxy.seen.map((h) => h.replace(API_KEY, "<the key>") || "(none)"))];
  log("the API key from SecretStorage reached the model as a Bearer token");

  // Another endpoint gets the completions, never the key.
  const other = await authRecordingProxy(t.mockUrl);
  try {
    t.writeSettings({ ...t.settings, "kestrel.baseUrl": other.url });
    await typeUntil(t, "completions through another endpoint", () => other.seen.length >= 2);
    const leaked = other.seen.some((h) => h.includes(API_KEY));
    results.checks.otherEndpointGotNoKey = !leaked;
    if (leaked) throw new Error("the API key reached an endpoint it was not entered for");
    log("an endpoint the key was not entered for got completions without it");
    // Back to the proxy (later scenarios run against it, as before), with its key.
    t.writeSettings({ ...t.settings, "kestrel.baseUrl": proxy.url });
    const before = proxy.seen.length;
    await typeUntil(t, "the key at the recording proxy again", () =>
      proxy.seen.slice(before).some((h) => h === `Bearer ${API_KEY}`));
  } finally {
    other.server.close();
  }
}
