// Chromium (playwright-core) on code-server's workbench.
import * as fs from "node:fs";
import * as path from "node:path";
import { chromium } from "playwright-core";
import { CHROMIUM, OUT } from "./config.mjs";
import { log } from "./util.mjs";

export function launchBrowser(dirs) {
  return chromium.launchPersistentContext(dirs.profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** The workbench on the workspace folder, loaded; page errors go to OUT/browser-errors.log. */
export async function openWorkbench(context, base, dirs) {
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(60_000);
  page.on("pageerror", (e) => fs.appendFileSync(path.join(OUT, "browser-errors.log"), `${e.stack || e}\n`));
  await page.goto(`${base}/?folder=${encodeURIComponent(dirs.ws)}`, { waitUntil: "domcontentloaded", timeout: 120_000 });
  await page.locator(".monaco-workbench").waitFor({ timeout: 120_000 });
  log("workbench loaded");
  return page;
}
