// A server crash (SIGKILL) is restarted automatically, with a message, and completions come back
// with the API key.
import { API_KEY } from "../lib/config.mjs";
import { completesAgain } from "../lib/editor.mjs";
import { findServerPid } from "../lib/processes.mjs";
import { log, waitFor } from "../lib/util.mjs";

export default async function crashRestart(t) {
  const { page, results, proxy, toast, statusText, codeServer } = t;
  const serverPid = findServerPid(codeServer.pid);
  if (!serverPid) throw new Error("could not find the kestrel-lsp process under code-server");
  process.kill(serverPid, "SIGKILL");
  log("killed kestrel-lsp pid", serverPid);
  const restarted = toast("stopped unexpectedly and was restarted (1/5");
  await restarted.waitFor({ timeout: 60_000 });
  // Read now: a toast hides after a while, and under load the completion below can outlast it (fresh clone, 2026-11-29).
  const toastText = (await restarted.innerText()).replace(/\s+/g, " ").trim();
  await waitFor("a new kestrel-lsp process", () => {
    const pid = findServerPid(codeServer.pid);
    return pid && pid !== serverPid;
  }, 60_000, 250);
  await waitFor("Kestrel ready after the restart", async () => /Kestrel (ready|thinking)/.test(await statusText()), 60_000, 200);
  const seenBefore = proxy.seen.length;
  await completesAgain(t, "after the restart", "w = ");
  results.checks.crashRestart = { toast: toastText };
  results.checks.apiKeyAfterRestart = proxy.seen.slice(seenBefore).some((h) => h === `Bearer ${API_KEY}`);
  if (!results.checks.apiKeyAfterRestart) throw new Error("the restarted server did not get the API key");
  log("restarted after a crash:", results.checks.crashRestart.toast);
  await page.locator(".notifications-toasts .notification-toast .codicon-notifications-clear").first().click().catch(() => undefined);
}
