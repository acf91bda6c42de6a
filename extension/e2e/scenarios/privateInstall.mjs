// No Kestrel in the interpreter: the notification offers a private environment and installs it
// (pip), and the privately installed server completes. Skipped with KESTREL_E2E_INSTALL=0.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { OUT, PYTHON } from "../lib/config.mjs";
import { completesAgain } from "../lib/editor.mjs";
import { log, waitFor } from "../lib/util.mjs";

export default async function privateInstall(t) {
  if (process.env.KESTREL_E2E_INSTALL === "0") return;
  const { page, results, toast, statusText } = t;
  const bare = path.join(t.tmp, "bare-python");
  execFileSync(PYTHON, ["-m", "venv", "--without-pip", bare], { env: t.env, timeout: 120_000 });
  t.writeSettings({ ...t.settings, "kestrel.baseUrl": t.mockUrl, "kestrel.server.python": path.join(bare, "bin", "python") });
  const offer = toast("not installed");
  await offer.waitFor({ timeout: 120_000 });
  results.checks.installOffer = (await offer.innerText()).replace(/\s+/g, " ").trim();
  log("offer:", results.checks.installOffer);
  await page.screenshot({ path: path.join(OUT, "install-offer.png") });
  await offer.getByRole("button", { name: "Install" }).click();
  await toast("installing the language server").waitFor({ timeout: 60_000 });
  log("installing into the private environment (pip)...");
  await toast("the language server is installed").waitFor({ timeout: 10 * 60_000 });
  await waitFor("Kestrel ready on the private environment", async () => /Kestrel (ready|thinking)/.test(await statusText()), 120_000, 250);
  await completesAgain(t, "from the privately installed server", "u = ");
  // The install also compiled the methods attrs would compile at each start (kestrel/compiled_methods.py).
  const cached = [...new Set(fs.readdirSync(t.dirs.data, { recursive: true })
    .filter((f) => /kestrel\/__pycache__\/attrs-methods\..*\.marshal$/.test(String(f)))
    .map((f) => fs.realpathSync(path.join(t.dirs.data, String(f)))))]; // (a venv's lib64 links to lib)
  if (cached.length !== 1) throw new Error(`the private install left ${cached.length} compiled-methods caches: ${cached.join(", ")}`);
  results.checks.compiledMethods = String(cached[0]);
  results.checks.privateInstall = true;
  log("the privately installed server completes");
}
