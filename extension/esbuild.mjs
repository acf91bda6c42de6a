// Bundles the extension (and vscode-languageclient) into one CommonJS file for VS Code.
import * as esbuild from "esbuild";
import { fileURLToPath } from "node:url";
import * as path from "node:path";

const root = path.dirname(fileURLToPath(import.meta.url));
const production = process.argv.includes("--production");
const watch = process.argv.includes("--watch");

const options = {
  entryPoints: [path.join(root, "src", "extension.ts")],
  outfile: path.join(root, "dist", "extension.js"),
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  external: ["vscode"],
  sourcemap: production ? false : "linked",
  minify: production,
  keepNames: true,
  logLevel: "info",
};

// The chat webview's script: a browser bundle (markdown-it + highlight.js), loaded under a strict CSP.
const webview = {
  entryPoints: [path.join(root, "src", "chat", "webview", "main.ts")],
  outfile: path.join(root, "dist", "chat.js"),
  bundle: true,
  platform: "browser",
  format: "iife",
  target: "es2022",
  sourcemap: false,
  minify: production,
  logLevel: "info",
};

if (watch) {
  for (const o of [options, webview]) await (await esbuild.context(o)).watch();
} else {
  await Promise.all([esbuild.build(options), esbuild.build(webview)]);
}
