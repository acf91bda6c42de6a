/**
 * The extension's secret-file rules run the server's table of cases (`tests/security/secret_paths.json`),
 * and its lists are the server's word for word (`pyserver/kestrel/context/exclusion.py`).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { SECRET_DATA_NAMES, SECRET_DIRS, SECRET_NAMES, isSecretPath } from "../src/secretFiles";

const REPO = path.resolve(__dirname, "..", "..");
const CASES: { path: string; excluded: boolean }[] = JSON.parse(
  fs.readFileSync(path.join(REPO, "tests", "security", "secret_paths.json"), "utf8"),
).cases;

describe("secret files", () => {
  it.each(CASES.map((c) => [c.path, c.excluded] as const))("%s excluded: %s", (p, excluded) => {
    expect(isSecretPath(p)).toBe(excluded);
  });

  it("use the server's lists", () => {
    const server = fs.readFileSync(path.join(REPO, "pyserver", "kestrel", "context", "exclusion.py"), "utf8");
    const tuple = (name: string) => {
      // one line: `NAME: tuple[str, ...] = ("a", "b")`; several: up to the `)` alone on its line
      const m = new RegExp(`^${name}: tuple\\[str, \\.\\.\\.\\] = \\((?:\\n([\\s\\S]*?)\\n\\)|([^\\n]*)\\)$)`, "m").exec(server);
      const body = m?.[1] ?? m?.[2] ?? "";
      return [...body.replace(/#.*$/gm, "").matchAll(/"([^"]+)"/g)].map((m) => m[1]);
    };
    expect([...SECRET_NAMES]).toEqual(tuple("SECRET_NAMES"));
    expect([...SECRET_DIRS]).toEqual(tuple("SECRET_DIRS"));
    expect([...SECRET_DATA_NAMES]).toEqual(tuple("SECRET_DATA_NAMES"));
  });
});
