import { describe, expect, it, vi } from "vitest";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { debounce } from "../src/debounce";
import { probeKestrel } from "../src/process";
import { Redactor, parseServerLogLine } from "../src/redact";
import { RestartPolicy } from "../src/restartPolicy";
import {
  PROBE_SCRIPT,
  interpreterFromPythonApi,
  launchCandidates,
  pythonArgs,
  splitCommand,
  venvPython,
} from "../src/serverCommand";

function token() {
  const listeners: (() => void)[] = [];
  return {
    isCancellationRequested: false,
    onCancellationRequested(l: () => void) {
      listeners.push(l);
      return { dispose: () => listeners.splice(listeners.indexOf(l), 1) };
    },
    cancel() {
      this.isCancellationRequested = true;
      for (const l of [...listeners]) l();
    },
    listeners,
  };
}

describe("debounce", () => {
  it("resolves true after the delay, and immediately for 0", async () => {
    vi.useFakeTimers();
    const p = debounce(30, token());
    vi.advanceTimersByTime(30);
    expect(await p).toBe(true);
    vi.useRealTimers();
    expect(await debounce(0)).toBe(true);
  });

  it("resolves false as soon as the request is cancelled, and unsubscribes", async () => {
    const t = token();
    const p = debounce(10_000, t);
    t.cancel();
    expect(await p).toBe(false);
    expect(t.listeners.length).toBe(0);
    const t2 = token();
    t2.cancel();
    expect(await debounce(5, t2)).toBe(false);
  });
});

describe("RestartPolicy", () => {
  it("allows max restarts within the window, then stops", () => {
    let now = 0;
    const p = new RestartPolicy(3, 1000, () => now);
    expect(p.crashed()).toEqual({ restart: true, count: 1 });
    expect(p.crashed().restart).toBe(true);
    expect(p.crashed().restart).toBe(true);
    expect(p.crashed()).toEqual({ restart: false, count: 4 });
    now = 5000; // old crashes age out
    expect(p.crashed()).toEqual({ restart: true, count: 1 });
    p.reset();
    expect(p.crashed().count).toBe(1);
  });
});

describe("Redactor", () => {
  it("removes known secrets, apiKey JSON fields, bearer tokens and key shapes", () => {
    const r = new Redactor();
    r.add("my-very-secret");
    r.add("ab"); // too short to redact safely
    expect(r.redact("key=my-very-secret!")).toBe("key=[redacted]!");
    expect(r.redact('{"kestrel":{"apiKey":"whatever-123","model":"m"}}')).toBe('{"kestrel":{"apiKey":"[redacted]","model":"m"}}');
    expect(r.redact("Authorization: Bearer abcdefghijklmnop")).toBe("Authorization: Bearer [redacted]");
    expect(r.redact("got sk-proj-ABCDEFGH12345 from env")).toBe("got [redacted] from env");
    expect(r.redact("ab cd sk-short")).toBe("ab cd sk-short");
  });
});

describe("parseServerLogLine", () => {
  it("maps Python logging levels and strips the timestamp", () => {
    expect(parseServerLogLine("2026-11-23 03:27:43,209 INFO kestrel.session: provider ready")).toEqual({
      level: "info",
      text: "kestrel.session: provider ready",
    });
    expect(parseServerLogLine("2026-11-23 03:27:43,209 WARNING x: y").level).toBe("warn");
    expect(parseServerLogLine("2026-11-23 03:27:43,209 ERROR x: y").level).toBe("error");
    expect(parseServerLogLine("2026-11-23 03:27:43,209 DEBUG x: y").level).toBe("debug");
    expect(parseServerLogLine("Traceback (most recent call last):")).toEqual({ level: "info", text: "Traceback (most recent call last):" });
  });
});

describe("launchCandidates", () => {
  it("an explicit command wins and is not probed", () => {
    expect(launchCandidates({ command: ["kestrel-lsp", "--log-level", "DEBUG"], python: "/py" })).toEqual([
      { command: "kestrel-lsp", args: ["--log-level", "DEBUG"], source: "setting:command" },
    ]);
    expect(launchCandidates({ command: 'kestrel-lsp --tcp "127.0.0.1:1"' })[0].args).toEqual(["--tcp", "127.0.0.1:1"]);
  });

  it("python setting, else the Python extension, else python3; the private venv as fallback", () => {
    expect(launchCandidates({ python: "/opt/py", pythonExtension: "/ext/py", privateVenvPython: "/venv/bin/python" }).map((c) => c.source)).toEqual([
      "setting:python",
      "private-venv",
    ]);
    expect(launchCandidates({ pythonExtension: "/ext/py" }).map((c) => [c.source, c.command])).toEqual([["python-extension", "/ext/py"]]);
    const d = launchCandidates({ platform: "linux", logLevel: "debug" });
    expect(d).toEqual([{ command: "python3", args: ["-m", "kestrel", "--log-level", "DEBUG"], source: "python3", python: "python3" }]);
    expect(launchCandidates({ python: "/venv/bin/python", privateVenvPython: "/venv/bin/python" }).length).toBe(1);
  });

  it("helpers", () => {
    expect(splitCommand(["a", "", "b"])).toEqual(["a", "b"]);
    expect(splitCommand("  ")).toEqual([]);
    expect(splitCommand("py 'a b' c")).toEqual(["py", "a b", "c"]);
    expect(pythonArgs("nonsense")).toEqual(["-m", "kestrel", "--log-level", "INFO"]);
    // A remote provider in the settings: the embedded model's process is not started before them.
    expect(pythonArgs("info", false)).toEqual(["-m", "kestrel", "--log-level", "INFO", "--no-prestart-local"]);
    expect(launchCandidates({ python: "/py", embeddedModelWanted: false })[0].args).toContain("--no-prestart-local");
    expect(launchCandidates({ python: "/py" })[0].args).not.toContain("--no-prestart-local");
    expect(venvPython("/v", "linux")).toBe("/v/bin/python");
    expect(venvPython("C:\\v", "win32")).toBe("C:\\v\\Scripts\\python.exe");
  });

  it("reads the interpreter from either Python extension API generation", async () => {
    expect(await interpreterFromPythonApi({ environments: { getActiveEnvironmentPath: () => ({ path: "/new/py" }) } })).toBe("/new/py");
    expect(await interpreterFromPythonApi({ settings: { getExecutionDetails: () => ({ execCommand: ["/old/py"] }) } })).toBe("/old/py");
    expect(await interpreterFromPythonApi({ settings: { getExecutionDetails: () => ({ execCommand: ["conda", "run"] }) } })).toBeUndefined();
    expect(await interpreterFromPythonApi(undefined)).toBeUndefined();
    expect(
      await interpreterFromPythonApi({
        environments: {
          getActiveEnvironmentPath: () => {
            throw new Error("x");
          },
        },
      }),
    ).toBeUndefined();
  });
});

describe("probeKestrel", () => {
  const repoPython = path.resolve(__dirname, "..", "..", ".venv", "bin", "python");
  it("reports a missing interpreter", async () => {
    expect((await probeKestrel("/nonexistent/python3", PROBE_SCRIPT)).result).toBe("no-interpreter");
  });
  it("reports an interpreter without kestrel", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kestrel-probe-"));
    const fake = path.join(dir, "python");
    fs.writeFileSync(fake, "#!/bin/sh\nexit 3\n", { mode: 0o755 });
    expect((await probeKestrel(fake, PROBE_SCRIPT)).result).toBe("missing");
  });
  it.skipIf(!fs.existsSync(repoPython))("finds kestrel in the repository's .venv", async () => {
    expect((await probeKestrel(repoPython, PROBE_SCRIPT)).result).toBe("installed");
  });
});

describe("RollingStats", () => {
  it("summarises every N samples", async () => {
    const { RollingStats } = await import("../src/latency");
    const r = new RollingStats(4);
    expect(r.push(4)).toBeUndefined();
    expect(r.push(1)).toBeUndefined();
    expect(r.push(3)).toBeUndefined();
    expect(r.push(2)).toEqual({ n: 4, p50: 2, p95: 4, max: 4 });
    expect(r.push(9)).toBeUndefined();
    expect(r.total).toBe(5);
  });
});
