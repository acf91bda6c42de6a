/**
 * Where and with what environment the language server process runs. Never in the workspace
 * folder: vscode-languageclient would otherwise start it there, and `python -m kestrel` puts its
 * working directory first on `sys.path`, so a `kestrel/` package (or a `json.py`, `asyncio.py`, ...)
 * in an untrusted folder would run instead of Kestrel. A relative path in a setting would also
 * resolve against it. Kestrel's own folder holds no Python modules.
 */
export interface SpawnOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export function serverSpawnOptions(ownDir: string, baseEnv: NodeJS.ProcessEnv = process.env): SpawnOptions {
  return {
    cwd: ownDir,
    env: {
      ...baseEnv,
      PYTHONUNBUFFERED: "1",
      PYTHONIOENCODING: "utf-8",
      // Python >= 3.11: do not put the working directory (or the script's) on sys.path at all.
      PYTHONSAFEPATH: "1",
    },
  };
}
