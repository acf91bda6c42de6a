/**
 * Files whose content never reaches a model: the same rules as the server's
 * `pyserver/kestrel/context/exclusion.py` (SECURITY.md lists them). The server refuses them too;
 * here they keep the chat from attaching them at all. Both implementations run one table of cases,
 * `tests/security/secret_paths.json` (here in `extension/test/secretFiles.test.ts`).
 */

/** Matched against the file name, lower-cased (`*` is any run of characters). */
export const SECRET_NAMES = [
  ".env*", "*.env", "*.pem", "*.key", "*.p12", "*.pfx", "*.ppk", "*.keystore", "*.jks",
  "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
  ".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass", ".htpasswd",
  "secret.*", "secrets.*", "*.secret", "*.secrets",
] as const;
/** Matched like SECRET_NAMES, but only for files that are not source code (by suffix). */
export const SECRET_DATA_NAMES = ["*credentials*"] as const;
const SOURCE_SUFFIXES = new Set([
  "py", "pyi", "js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "go", "rs", "java", "kt", "kts",
  "scala", "cs", "fs", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "m", "mm", "swift", "rb", "php",
  "dart", "lua", "ex", "exs", "erl", "hs", "ml", "clj", "groovy", "vue", "svelte", "md", "rst",
]);
/** Any file under a folder with one of these names, at any depth. */
export const SECRET_DIRS = [".git", ".ssh", ".aws", ".gnupg"] as const;

const asRegExp = (glob: string) => new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`, "s");
const NAMES = SECRET_NAMES.map(asRegExp);
const DATA_NAMES = SECRET_DATA_NAMES.map(asRegExp);

/** `name` and the names Windows opens for it: trailing dots/spaces dropped, an NTFS stream cut off. */
function windowsForms(name: string): string[] {
  const forms = new Set([name, name.replace(/[. ]+$/, "")]);
  if (name.includes(":")) forms.add(name.split(":", 1)[0].replace(/[. ]+$/, ""));
  return [...forms].filter(Boolean);
}

function isSecretName(name: string): boolean {
  return windowsForms(name).some((form) => {
    if (NAMES.some((re) => re.test(form))) return true;
    const dot = form.lastIndexOf(".");
    const source = dot >= 0 && SOURCE_SUFFIXES.has(form.slice(dot + 1));
    return !source && DATA_NAMES.some((re) => re.test(form));
  });
}

/** A file path (`/` or `\` separated, any case) is a secret by its name or a folder on its path. */
export function isSecretPath(path: string): boolean {
  const parts = path.replace(/\\/g, "/").split("/").filter(Boolean).map((p) => p.toLowerCase());
  if (!parts.length) return false;
  const folders = parts.slice(0, -1);
  if (folders.some((f) => windowsForms(f).some((form) => (SECRET_DIRS as readonly string[]).includes(form)))) return true;
  return isSecretName(parts[parts.length - 1]);
}
