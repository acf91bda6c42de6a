// code-server: a sandbox (temp dirs, environment), the extension installed into it, user settings,
// the workspace's files, and the server itself on a free port.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { CHROMIUM, CODE_SERVER, NODE24_BIN, OUT, PKG, PYTHON, REPO, VSIX } from "./config.mjs";
import { start } from "./processes.mjs";
import { freePort, httpGet, log, waitFor } from "./util.mjs";

/** A fresh OUT, and the tools and the extension this test needs. */
export function checkPrerequisites() {
  fs.rmSync(OUT, { recursive: true, force: true });
  fs.mkdirSync(OUT, { recursive: true });
  for (const [what, p] of [["code-server", CODE_SERVER], ["node 24", path.join(NODE24_BIN, "node")], ["python", PYTHON], ["chromium", CHROMIUM]]) {
    if (!fs.existsSync(p)) throw new Error(`${what} not found at ${p} (run \`make e2e-deps\`)`);
  }
  const builtMain = path.join(REPO, PKG.main);
  if (!VSIX && !fs.existsSync(builtMain)) throw new Error(`extension not built (${builtMain}); run \`npm run build\``);
}

/** Temp dirs for code-server's data, extensions, workspace, XDG and Chromium, and the environment. */
export function makeSandbox() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "kestrel-e2e-"));
  const dirs = {
    data: path.join(tmp, "data"),
    ext: path.join(tmp, "extensions"),
    ws: path.join(tmp, "workspace"),
    xdg: path.join(tmp, "xdg"),
    profile: path.join(tmp, "chromium"),
  };
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });
  const env = {
    ...process.env,
    PATH: `${NODE24_BIN}${path.delimiter}${process.env.PATH}`,
    XDG_CONFIG_HOME: path.join(dirs.xdg, "config"),
    XDG_DATA_HOME: path.join(dirs.xdg, "data"),
    XDG_CACHE_HOME: path.join(dirs.xdg, "cache"),
    XDG_STATE_HOME: path.join(dirs.xdg, "state"),
    KESTREL_LOCAL: "0", // never start the embedded model in this test
    // "Install Language Server" runs pip: keep its wheel cache across runs.
    PIP_CACHE_DIR: process.env.PIP_CACHE_DIR || path.join(os.homedir(), ".cache", "pip"),
    PIP_DISABLE_PIP_VERSION_CHECK: "1",
  };
  delete env.OPENAI_API_KEY;
  delete env.KESTREL_PROVIDER;
  delete env.VSCODE_IPC_HOOK_CLI;
  return { tmp, dirs, env };
}

/** The extension: from the VSIX through code-server's CLI, else the built folder. Returns "vsix" | "folder". */
export function installExtension(dirs, env) {
  if (VSIX) {
    log("installing", path.relative(REPO, VSIX));
    execFileSync(path.join(NODE24_BIN, "node"), [CODE_SERVER, "--user-data-dir", dirs.data, "--extensions-dir", dirs.ext, "--install-extension", VSIX], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 180_000,
    });
  } else {
    const dest = path.join(dirs.ext, `${PKG.publisher}.${PKG.name}-${PKG.version}`);
    log("copying the built extension folder to", dest);
    for (const p of ["package.json", "extension/dist", "extension/media", "pyproject.toml", "pyserver"]) {
      fs.cpSync(path.join(REPO, p), path.join(dest, p), { recursive: true });
    }
  }
  return VSIX ? "vsix" : "folder";
}

/** User settings: Kestrel on the mock model, and a quiet editor (no other suggestions, hovers, tips). */
export function baseSettings(mockUrl) {
  return {
    "kestrel.server.python": PYTHON,
    "kestrel.provider": "chat",
    "kestrel.model": "mock-model",
    "kestrel.baseUrl": mockUrl,
    "kestrel.local.enabled": false,
    "editor.inlineSuggest.enabled": true,
    "editor.quickSuggestions": { other: false, comments: false, strings: false },
    "editor.suggestOnTriggerCharacters": false,
    "editor.wordBasedSuggestions": "off",
    "editor.parameterHints.enabled": false,
    "editor.minimap.enabled": false,
    "editor.hover.enabled": false,
    "files.autoSave": "off",
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "workbench.enableExperiments": false,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "workbench.welcomePage.walkthroughs.openOnInstall": false,
    "telemetry.telemetryLevel": "off",
    "security.workspace.trust.enabled": false,
    "extensions.autoUpdate": false,
    "extensions.autoCheckUpdates": false,
    "extensions.ignoreRecommendations": true,
    "update.mode": "none",
    "chat.commandCenter.enabled": false,
  };
}

/**
 * code-server reads user settings from User/ and the remote machine's from Machine/ (which win
 * for machine-overridable settings such as kestrel.server.python): the writer writes both.
 */
export function settingsWriter(dirs) {
  return (s) => {
    for (const f of [path.join(dirs.data, "User", "settings.json"), path.join(dirs.data, "Machine", "settings.json")]) {
      fs.mkdirSync(path.dirname(f), { recursive: true });
      fs.writeFileSync(f, JSON.stringify(s, null, 2));
    }
  };
}

/** The small multi-file Python project the chat scenarios attach, apply to, insert into and search. */
export const PROJECT = {
  "models.py": [
    "from dataclasses import dataclass",
    "",
    "",
    "@dataclass",
    "class Task:",
    "    title: str",
    "    done: bool = False",
    "",
    "",
    "def format_task(task):",
    '    mark = "x" if task.done else " "',
    '    return f"[{mark}] {task.title}"',
    "",
    "",
    "def new_task(title):",
    "    return Task(title.strip())",
    "",
  ].join("\n"),
  "utils.py": [
    "def slugify(text):",
    '    return "-".join(text.lower().split())',
    "",
    "",
    "def pluralize(word, n):",
    '    return word if n == 1 else word + "s"',
    "",
  ].join("\n"),
  "tasks.py": [
    "from models import Task, format_task, new_task",
    "from utils import pluralize",
    "",
    "",
    "def summary(tasks):",
    "    open_tasks = [t for t in tasks if not t.done]",
    '    return f"{len(open_tasks)} open {pluralize(\'task\', len(open_tasks))}"',
    "",
    "",
    "def report(tasks):",
    '    return "\\n".join(format_task(t) for t in tasks)',
    "",
  ].join("\n"),
  // Imported by no other file and opened by no scenario but codebaseChat: only a workspace search finds it.
  "invoice.py": [
    "TAX_RATE = 0.2",
    "",
    "",
    "def invoice_total(lines, discount=0.0):",
    "    subtotal = sum(qty * price for qty, price in lines)",
    "    taxed = subtotal * (1 + TAX_RATE)",
    "    return round(taxed * (1 - discount), 2)",
    "",
  ].join("\n"),
};

/** The value in the workspace's `.env`: a secret file, never offered as a mention nor sent to the model. */
export const DOTENV_SECRET = "dotenv-value-that-never-reaches-the-model";

/** counter.ts: a type error in a two-line statement inside a class method (quickFixTypeScript). */
export const COUNTER_TS = [
  "export class Counter {",
  "  total(items: string[]): number {",
  "    const count: number = items",
  '      .join(",");',
  "    return count;",
  "  }",
  "}",
  "",
].join("\n");

/** A file longer than the chat-fit scenario's context window (1,203 lines), its target function last. */
export const FIT_BIG_PY = [
  ...Array.from({ length: 300 }, (_, i) => [`def fit_helper_${i}(value):`, `    return value + ${i}`, "", ""]).flat(),
  "def fit_check_target(text):",
  "    return text.strip()[:10]",
  "",
].join("\n");

/**
 * The workspace: main.py, the files for the quick-fix and inline-edit scenarios, PROJECT for
 * the chat scenarios (present from the start, so quick open finds them), and a `.env`.
 */
/** The next-edit scenario's file (written before code-server starts: quick open lists only what its
 *  file search has seen, and a file written during the session can be missing from it). */
export const RENAME_PY = 'def greet(name):\n    print("hello", name)\n    return name.upper()\n';

export function writeWorkspace(dirs) {
  const mainPy = path.join(dirs.ws, "main.py");
  fs.writeFileSync(mainPy, "def compute(n):\n    return n * 2\n\n\n");
  fs.writeFileSync(path.join(dirs.ws, "config.json"), '{\n  "a": 1,\n  "b": 2,\n}\n');
  fs.writeFileSync(path.join(dirs.ws, "edit.py"), "import math\n\n\ndef area(r):\n    return 3.14 * r * r\n");
  fs.writeFileSync(path.join(dirs.ws, "apply_target.py"), "A = 0\n");
  fs.writeFileSync(path.join(dirs.ws, "rename.py"), RENAME_PY);
  fs.writeFileSync(path.join(dirs.ws, "counter.ts"), COUNTER_TS);
  fs.writeFileSync(path.join(dirs.ws, "fit_big.py"), FIT_BIG_PY);
  for (const [name, text] of Object.entries(PROJECT)) fs.writeFileSync(path.join(dirs.ws, name), text);
  fs.writeFileSync(path.join(dirs.ws, ".env"), `KESTREL_E2E_DOTENV=${DOTENV_SECRET}\n`);
  return mainPy;
}

/**
 * Starts code-server on a free port with the sandbox's data, extensions and workspace. Workspace
 * trust is off (every folder trusted) unless `workspaceTrust`: then a folder nobody trusted opens
 * in Restricted Mode, as a freshly cloned repository does.
 */
export async function startCodeServer(tmp, dirs, env, { name = "code-server", workspaceTrust = false } = {}) {
  const port = await freePort();
  const config = path.join(tmp, `${name}.yaml`);
  fs.writeFileSync(config, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
  const codeServer = start(
    name,
    path.join(NODE24_BIN, "node"),
    [
      CODE_SERVER,
      "--config", config,
      "--bind-addr", `127.0.0.1:${port}`,
      "--auth", "none",
      "--user-data-dir", dirs.data,
      "--extensions-dir", dirs.ext,
      ...(workspaceTrust ? [] : ["--disable-workspace-trust"]),
      "--disable-telemetry",
      "--disable-update-check",
      "--disable-getting-started-override",
      "--reconnection-grace-time", "5",
      "--ignore-last-opened",
      dirs.ws,
    ],
    { env, cwd: tmp },
  );
  const base = `http://127.0.0.1:${port}`;
  await waitFor("code-server /healthz", async () => (await httpGet(`${base}/healthz`)).status === 200, 120_000, 500);
  log(name, "up at", base);
  return { codeServer, base };
}
