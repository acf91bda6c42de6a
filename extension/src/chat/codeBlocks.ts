/**
 * Code blocks of a chat answer: which file a block belongs to, whether it is a shell command, and
 * how it merges into that file. Pure (no `vscode` import): the webview uses `blockTarget` and
 * `isShellLang` to label and offer its buttons, the extension host uses all three to apply a block.
 *
 * Why a merge and not a paste: answers usually show one changed function ("here is the fixed
 * `format_task`"), not the whole file. Applying it must replace that function where it is, not add a
 * second copy at the cursor. The parsers below are deliberately small: they find top-level (and
 * class-level) definitions by name, skipping strings and comments so that a `}` or `def` inside a
 * string cannot fool them. Whatever they cannot place is appended, never dropped.
 */

// ---------------------------------------------------------------------------------------------
// Which file a block names

/** Extensions a named file may have: a token like `os.path` or `example.com` is not a file. */
const FILE_EXTENSIONS = new Set([
  "py", "pyi", "pyw", "ipynb", "js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "go", "rs", "java", "kt", "kts",
  "scala", "sc", "cs", "fs", "vb", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "m", "mm", "swift", "rb", "php",
  "dart", "lua", "ex", "exs", "erl", "hrl", "hs", "ml", "mli", "clj", "cljs", "groovy", "gradle", "vue", "svelte",
  "astro", "r", "jl", "pl", "pm", "sh", "bash", "zsh", "fish", "ps1", "psm1", "bat", "cmd", "sql", "graphql", "gql",
  "proto", "html", "htm", "css", "scss", "sass", "less", "xml", "xsl", "svg", "json", "jsonc", "json5", "yaml", "yml",
  "toml", "ini", "cfg", "conf", "properties", "md", "mdx", "rst", "txt", "csv", "tf", "hcl", "nix", "zig", "nim",
  "v", "sv", "vhd", "cmake", "mk", "dockerfile", "lock", "tex", "bib",
]);
/** File names without an extension that are still files. */
const BARE_FILE_NAMES = new Set(["makefile", "dockerfile", "gemfile", "rakefile", "procfile", "justfile", "vagrantfile", "jenkinsfile"]);

const LANG_BY_EXTENSION: Record<string, string> = {
  py: "python", pyi: "python", pyw: "python", js: "javascript", jsx: "javascript", mjs: "javascript", cjs: "javascript",
  ts: "typescript", tsx: "typescript", mts: "typescript", cts: "typescript", go: "go", rs: "rust", java: "java",
  kt: "kotlin", kts: "kotlin", scala: "scala", cs: "csharp", c: "c", h: "c", cc: "cpp", cpp: "cpp", cxx: "cpp",
  hpp: "cpp", hh: "cpp", hxx: "cpp", swift: "swift", rb: "ruby", php: "php", sh: "bash", bash: "bash", zsh: "zsh",
  fish: "fish", ps1: "powershell", bat: "bat", cmd: "bat", sql: "sql", html: "html", css: "css", scss: "scss",
  json: "json", yaml: "yaml", yml: "yaml", toml: "toml", md: "markdown", lua: "lua", dart: "dart",
};

/** The language a file's name implies ("" when unknown). */
export function langFromPath(path: string): string {
  const name = path.split("/").pop()?.toLowerCase() ?? "";
  if (BARE_FILE_NAMES.has(name)) return name === "makefile" ? "makefile" : name === "dockerfile" ? "dockerfile" : "";
  const dot = name.lastIndexOf(".");
  return dot > 0 ? (LANG_BY_EXTENSION[name.slice(dot + 1)] ?? "") : "";
}

/** `token` as a relative file path if it looks like one (`src/models.py`, `./a.ts`), else undefined. */
function asPath(token: string | undefined): string | undefined {
  if (!token) return undefined;
  const t = token
    .trim()
    .replace(/^[("'`*_[]+|[)"'`*_\]:,;.]+$/g, "")
    .replace(/\\/g, "/")
    .replace(/^\.\//, "");
  if (!t || t.length > 240 || !/^[\w.\-/@+~]+$/.test(t) || t.endsWith("/")) return undefined;
  const name = t.split("/").pop() ?? "";
  if (BARE_FILE_NAMES.has(name.toLowerCase())) return t;
  const dot = name.lastIndexOf(".");
  if (dot <= 0 || !FILE_EXTENSIONS.has(name.slice(dot + 1).toLowerCase())) return undefined;
  return t;
}

/** The fence's info string: "python", "python models.py", "py title=\"models.py\"", "python:src/models.py", "models.py". */
function parseInfo(info: string): { lang: string; file?: string } {
  const s = info.trim();
  const tokens = s.split(/\s+/).filter(Boolean);
  let lang = tokens[0] ?? "";
  let file: string | undefined;
  if (lang.includes("=")) lang = "";
  else if (lang.includes(":")) {
    const [l, ...rest] = lang.split(":");
    lang = l;
    file = asPath(rest.join(":"));
  }
  const attr = /\b(?:title|file|filename|path|name)\s*=\s*(?:"([^"]+)"|'([^']+)'|(\S+))/i.exec(s);
  file ??= asPath(attr ? (attr[1] ?? attr[2] ?? attr[3]) : undefined);
  for (const t of tokens.slice(1)) {
    if (file) break;
    if (!t.includes("=")) file = asPath(t);
  }
  lang = lang.replace(/^[{.]+|}+$/g, "").toLowerCase();
  // A first word with a dot or a slash is a file ("models.py"); a bare word is a language ("makefile").
  if (!file && /[./]/.test(lang) && asPath(lang)) {
    file = asPath(tokens[0]);
    lang = "";
  }
  return { lang, file };
}

/** The markdown line just before a fence, when it is a header naming a file. */
function fileFromHeader(linesBefore: string[]): string | undefined {
  let i = linesBefore.length - 1;
  while (i >= 0 && !linesBefore[i].trim()) i--;
  if (i < 0 || linesBefore.length - 1 - i > 1) return undefined; // at most one blank line between
  const line = linesBefore[i].trim();
  if (line.length > 160) return undefined;
  const firstPathIn = (text: string) => text.split(/[\s()]+/).map(asPath).find(Boolean);
  // "### src/models.py", "**models.py**", "`models.py`:", "File: models.py"
  const heading = /^#{1,6}\s+(.+)$/.exec(line) ?? /^(?:\*\*|__)(.+?)(?:\*\*|__):?$/.exec(line) ?? /^`([^`]+)`:?$/.exec(line);
  if (heading) return firstPathIn(heading[1].replace(/[*_`]/g, " "));
  const labelled = /^(?:\*\*|__)?(?:file|filename|path)(?:\*\*|__)?\s*:\s*(?:\*\*|__)?(.+)$/i.exec(line);
  if (labelled) return firstPathIn(labelled[1].replace(/[*_`]/g, " "));
  // "In `utils.py`:", "Update src/models.py like this:" — a line introducing the block
  if (!/:\s*(?:\*\*|__)?$/.test(line)) return undefined;
  const quoted = [...line.matchAll(/`([^`]+)`/g)].map((m) => asPath(m[1])).filter(Boolean);
  if (quoted.length) return quoted[quoted.length - 1];
  const bare = line.replace(/[*_:]+/g, " ").split(/\s+/).map(asPath).filter(Boolean);
  return bare.length ? bare[bare.length - 1] : undefined;
}

/** A first code line that only names the file: "# models.py", "// file: a.ts", "# File: x.py", "<!-- index.html -->". */
const FILE_COMMENT = /^\s*(?:#|\/\/|--|;|%|\/\*+|<!--)\s*(?:(?:file(?:name)?|path)\s*:\s*)?(\S+?)\s*(?:\*\/|-->)?\s*$/i;

function fileFromComment(code: string): string | undefined {
  const first = code.split("\n", 1)[0] ?? "";
  const m = FILE_COMMENT.exec(first);
  return m ? asPath(m[1]) : undefined;
}

/** The code without a first line that only names its file (that line is a label, not content). */
export function stripFileComment(code: string): string {
  return fileFromComment(code) ? code.slice(code.indexOf("\n") + 1 || code.length) : code;
}

/**
 * The language and workspace-relative file of a fenced block. `info` is the fence's info string,
 * `linesBefore` the markdown lines before the fence (nearest last), `code` the block's text.
 * The file comes from the info string, else the code's first-line comment, else a header line.
 */
export function blockTarget(info: string, linesBefore: string[], code: string): { lang: string; file?: string } {
  const parsed = parseInfo(info);
  const file = parsed.file ?? fileFromComment(code) ?? fileFromHeader(linesBefore);
  const lang = parsed.lang || (file ? langFromPath(file) : "");
  return file ? { lang, file } : { lang };
}

const SHELL_LANGS = new Set(["sh", "bash", "shell", "console", "zsh", "shellsession", "powershell", "ps1", "pwsh", "cmd", "bat", "fish"]);

/** A block meant for a terminal ("Run in terminal" instead of "Apply"). */
export function isShellLang(lang: string): boolean {
  return SHELL_LANGS.has(lang.trim().toLowerCase());
}

// ---------------------------------------------------------------------------------------------
// Units: the named definitions of a text, by line

type Dialect = "python" | "js" | "go" | "rust" | "java" | "cs" | "c" | "kotlin" | "swift" | "scala" | "php";

const DIALECTS: Record<string, Dialect> = {
  python: "python", py: "python", python3: "python", py3: "python", pyi: "python", ipython: "python",
  typescript: "js", ts: "js", tsx: "js", javascript: "js", js: "js", jsx: "js", mjs: "js", cjs: "js", mts: "js", cts: "js",
  typescriptreact: "js", javascriptreact: "js",
  go: "go", golang: "go", rust: "rust", rs: "rust", java: "java", csharp: "cs", cs: "cs", "c#": "cs",
  c: "c", h: "c", cpp: "c", "c++": "c", cc: "c", cxx: "c", hpp: "c", objc: "c", "objective-c": "c",
  kotlin: "kotlin", kt: "kotlin", swift: "swift", scala: "scala", php: "php",
};

/** Dialects whose statements end with `;` or `}` (a newline ends nothing there). */
const SEMICOLON_DIALECTS = new Set<Dialect>(["rust", "java", "cs", "c", "php"]);

interface Unit {
  /** The name it is matched by (`format_task`, `Server.Handle`, `impl Display for Point`); none for other statements. */
  key?: string;
  kind: "def" | "container" | "value" | "import" | "package" | "other";
  /** First line of its leading comments (doc comments), else `start`. */
  docStart: number;
  /** First line of the unit itself, decorators / attributes / annotations included. */
  start: number;
  /** The line where its declaration (after decorators) begins. */
  declLine: number;
  /** One past its last line. */
  end: number;
  /** It has a body (`{…}` or an indented suite): a prototype `int f(void);` does not. */
  hasBody: boolean;
  /**
   * A definition shown alone may be a method: true when it surely is one (it takes `self`, was
   * indented, uses method syntax): look in classes first; false when it surely is not; undefined:
   * the file's top level first, then its classes.
   */
  memberHint?: boolean;
  children?: Unit[];
  /** Brace containers: the line of the closing `}` (new members go before it). */
  closeLine?: number;
}

const indentOf = (line: string) => /^[ \t]*/.exec(line)![0];
const indentWidth = (line: string) => indentOf(line).replace(/\t/g, "        ").length;
const isBlank = (line: string | undefined) => !line || !line.trim();

// --- Python ----------------------------------------------------------------------------------

/** Python lines with strings and comments blanked, and which lines continue a statement. */
function scanPython(lines: string[]): { code: string[]; cont: boolean[] } {
  const code: string[] = [];
  const cont: boolean[] = [];
  let quote: string | null = null;
  let depth = 0;
  let backslash = false;
  for (const line of lines) {
    cont.push(quote !== null || depth > 0 || backslash);
    let out = "";
    for (let i = 0; i < line.length; i++) {
      const c = line[i];
      if (quote) {
        if (c === "\\") {
          out += " ";
          if (i + 1 < line.length) out += " ";
          i++;
        } else if (line.startsWith(quote, i)) {
          out += quote;
          i += quote.length - 1;
          quote = null;
        } else out += " ";
        continue;
      }
      if (c === "#") {
        out += " ".repeat(line.length - i);
        break;
      }
      if (c === '"' || c === "'") {
        quote = line.startsWith(c.repeat(3), i) ? c.repeat(3) : c;
        out += quote;
        i += quote.length - 1;
        continue;
      }
      if ("([{".includes(c)) depth++;
      else if (")]}".includes(c)) depth = Math.max(0, depth - 1);
      out += c;
    }
    // A one-quote string ends at the line's end unless escaped there.
    if (quote && quote.length === 1 && !line.endsWith("\\")) quote = null;
    backslash = !quote && out.trimEnd().endsWith("\\");
    code.push(out);
  }
  return { code, cont };
}

function pythonUnits(lines: string[], scan: { code: string[]; cont: boolean[] }, from: number, to: number, nested: boolean): Unit[] {
  const { code, cont } = scan;
  const starts: number[] = [];
  for (let i = from; i < to; i++) if (!cont[i] && code[i].trim()) starts.push(i);
  if (!starts.length) return [];
  const base = Math.min(...starts.map((i) => indentWidth(lines[i])));
  const tops = starts.filter((i) => indentWidth(lines[i]) <= base);
  const units: Unit[] = [];
  let decorators: number | undefined;
  for (let k = 0; k < tops.length; k++) {
    const s = tops[k];
    const header = code[s].trim();
    if (header.startsWith("@")) {
      decorators ??= s;
      continue;
    }
    let end = tops[k + 1] ?? to;
    // Trailing blank lines and comments at this level belong to what follows.
    while (end > s + 1 && !cont[end - 1] && (isBlank(lines[end - 1]) || (!code[end - 1].trim() && indentWidth(lines[end - 1]) <= base))) end--;
    const start = decorators ?? s;
    decorators = undefined;
    const floor = units.length ? units[units.length - 1].end : from;
    let docStart = start;
    while (docStart > floor && lines[docStart - 1].trim().startsWith("#") && !cont[docStart - 1] && !isPlaceholderLine(lines[docStart - 1])) docStart--;
    const unit: Unit = { kind: "other", docStart, start, declLine: s, end, hasBody: true };
    let m: RegExpExecArray | null;
    if ((m = /^(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(\s*(\w*)/.exec(header))) {
      Object.assign(unit, { kind: "def", key: m[1], memberHint: nested || m[2] === "self" || m[2] === "cls" });
    } else if ((m = /^class\s+([A-Za-z_]\w*)/.exec(header))) {
      Object.assign(unit, { kind: "container", key: m[1], children: pythonUnits(lines, scan, s + 1, end, true) });
    } else if (/^(?:import|from)\s/.test(header)) {
      unit.kind = "import";
    } else if ((m = /^([A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)/.exec(header))) {
      Object.assign(unit, { kind: "value", key: m[1] });
    }
    units.push(unit);
  }
  return units;
}

// --- Brace languages ---------------------------------------------------------------------------

/** The text with comments and string contents replaced by spaces (same length, newlines kept). */
function blankBrace(text: string, dialect: Dialect): string {
  const out = text.split("");
  const n = text.length;
  const blank = (from: number, to: number) => {
    for (let k = from; k < to && k < n; k++) if (out[k] !== "\n") out[k] = " ";
  };
  const isIdent = (c: string | undefined) => c !== undefined && /[\w$]/.test(c);
  let prev = ""; // the last significant character (decides whether `/` starts a regex in JS)
  let braces = 0;
  const templates: number[] = []; // JS: brace depth at which each open `${` started
  /** JS template text from `i` up to the closing backtick or the next `${`; returns where code resumes. */
  const template = (i: number): number => {
    let j = i;
    while (j < n) {
      if (text[j] === "\\") j += 2;
      else if (text[j] === "`") {
        blank(i, j);
        return j + 1;
      } else if (text[j] === "$" && text[j + 1] === "{") {
        blank(i, j);
        templates.push(braces);
        braces++;
        return j + 2;
      } else j++;
    }
    blank(i, n);
    return n;
  };
  let i = 0;
  while (i < n) {
    const c = text[i];
    const d = text[i + 1];
    if (c === "/" && d === "/") {
      const j = text.indexOf("\n", i);
      blank(i, j < 0 ? n : j);
      i = j < 0 ? n : j;
      continue;
    }
    if (c === "/" && d === "*") {
      const j = text.indexOf("*/", i + 2);
      const e = j < 0 ? n : j + 2;
      blank(i, e);
      i = e;
      continue;
    }
    if (dialect === "php" && c === "#" && d !== "[") {
      const j = text.indexOf("\n", i);
      blank(i, j < 0 ? n : j);
      i = j < 0 ? n : j;
      continue;
    }
    if (dialect === "rust" && c === "r" && !isIdent(text[i - 1])) {
      const raw = /^r(#*)"/.exec(text.slice(i, i + 40));
      if (raw) {
        const close = `"${raw[1]}`;
        const j = text.indexOf(close, i + raw[0].length);
        const e = j < 0 ? n : j + close.length;
        blank(i + raw[0].length, j < 0 ? n : j);
        i = e;
        prev = '"';
        continue;
      }
    }
    if (c === '"' || c === "'" || c === "`") {
      if (c === "'" && dialect === "rust" && /[A-Za-z_]/.test(d ?? "") && text[i + 2] !== "'") {
        i++; // a lifetime ('a), not a char literal
        prev = "a";
        continue;
      }
      if (c === "`" && dialect === "js") {
        i = template(i + 1);
        prev = '"';
        continue;
      }
      if (c === '"' && text.startsWith('"""', i)) {
        const j = text.indexOf('"""', i + 3);
        blank(i + 3, j < 0 ? n : j);
        i = j < 0 ? n : j + 3;
        prev = '"';
        continue;
      }
      const verbatim = c === '"' && dialect === "cs" && (text[i - 1] === "@" || (text[i - 1] === "$" && text[i - 2] === "@"));
      const raw = c === "`"; // Go raw strings (Kotlin/Scala identifiers in backticks end the same way)
      let j = i + 1;
      while (j < n && text[j] !== c) {
        if (text[j] === "\n" && !verbatim && !raw) break;
        if (text[j] === "\\" && !verbatim && !raw) j++;
        else if (verbatim && text[j] === '"' && text[j + 1] === '"') j++;
        j++;
      }
      blank(i + 1, Math.min(j, n));
      i = Math.min(j + 1, n);
      prev = '"';
      continue;
    }
    if (dialect === "js" && c === "/" && (prev === "" || "(,=:[!&|?{};+-*%<>~^".includes(prev))) {
      let j = i + 1;
      let inClass = false;
      while (j < n && text[j] !== "\n") {
        if (text[j] === "\\") j++;
        else if (text[j] === "[") inClass = true;
        else if (text[j] === "]") inClass = false;
        else if (text[j] === "/" && !inClass) break;
        j++;
      }
      if (text[j] === "/") {
        blank(i + 1, j);
        i = j + 1;
        prev = "/x";
        continue;
      }
    }
    if (dialect === "js") {
      if (c === "{") braces++;
      else if (c === "}") {
        braces--;
        if (templates.length && templates[templates.length - 1] === braces) {
          templates.pop();
          i = template(i + 1);
          prev = '"';
          continue;
        }
      }
    }
    if (!/\s/.test(c)) prev = isIdent(c) ? "a" : c;
    i++;
  }
  return out.join("");
}

interface Statement {
  start: number;
  end: number;
  /** Its first `{…}` at the statement's own level (a body, an object literal). */
  open?: number;
  close?: number;
}

function lineEnd(s: string, at: number): number {
  const j = s.indexOf("\n", at);
  return j < 0 ? s.length : j;
}

/** ASI languages (JS, Go, Kotlin…): does the statement go on past this newline? */
function continuesAfter(s: string, lineText: string, nextAt: number): boolean {
  const cur = lineText.trim();
  if (!cur) return false;
  if (/(?:[=+\-*/%&|^!?:,.([{]|=>|\bextends|\bimplements)$/.test(cur)) return true;
  const rest = s.slice(nextAt);
  const next = /^\s*(\S.*)?/.exec(rest)?.[1] ?? "";
  return /^(?:[.?:|&{]|=>|extends\b|implements\b|where\b)/.test(next) && !next.startsWith("...");
}

/** Top-level statements of `s` (blanked) in [from, to). */
function statements(s: string, from: number, to: number, dialect: Dialect): Statement[] {
  const out: Statement[] = [];
  let i = from;
  while (i < to) {
    while (i < to && /\s/.test(s[i])) i++;
    if (i >= to) break;
    const start = i;
    const firstChar = s[start];
    let depth = 0;
    let end = to;
    let open: number | undefined;
    let close: number | undefined;
    for (let j = start; j < to; j++) {
      const c = s[j];
      if (c === "(" || c === "[" || c === "{") {
        if (c === "{" && depth === 0 && open === undefined) open = j;
        depth++;
      } else if (c === ")" || c === "]" || c === "}") {
        if (depth === 0) continue; // stray closer: not ours
        depth--;
        if (c === "}" && depth === 0) {
          if (open !== undefined && close === undefined) close = j;
          const eol = Math.min(lineEnd(s, j), to);
          if (/^[;,)\]]*$/.test(s.slice(j + 1, eol).trim())) {
            end = eol;
            break;
          }
        }
      } else if (c === ";" && depth === 0) {
        const eol = Math.min(lineEnd(s, j), to);
        end = s.slice(j + 1, eol).trim() ? j + 1 : eol;
        break;
      } else if (c === "\n" && depth === 0) {
        const lineStart = s.lastIndexOf("\n", j - 1) + 1;
        const lineText = s.slice(Math.max(lineStart, start), j);
        // Semicolon languages: only a preprocessor line or an attribute/annotation line ends at its newline.
        const ends = SEMICOLON_DIALECTS.has(dialect)
          ? "#@[".includes(firstChar) && !lineText.trimEnd().endsWith("\\")
          : !continuesAfter(s, lineText, j + 1);
        if (ends) {
          end = j;
          break;
        }
      }
    }
    out.push({ start, end, open, close });
    i = Math.max(end, start + 1);
  }
  return out;
}

const CONTROL_WORDS = new Set(["if", "for", "while", "switch", "catch", "return", "new", "typeof", "sizeof", "await", "using", "lock", "foreach", "function", "fixed", "do", "else", "try", "throw", "yield", "match", "when", "defer", "go", "loop", "unsafe"]);

/** Name and kind of a brace-language statement from its header (the text before its body). */
function braceName(header: string, dialect: Dialect, hasBody: boolean, endsWithSemicolon: boolean, member: boolean): Pick<Unit, "key" | "kind" | "memberHint"> {
  const h = header
    .replace(/\s+/g, " ")
    .trim()
    .replace(/^(?:(?:@[\w.]+(?:\s*\([^)]*\))?|#\[[^\]]*\]|\[[^\]]*\])\s*)+/, "");
  let m: RegExpExecArray | null;
  // Imports and package lines: never matched by name.
  if (/^(?:import\b(?!\()|export\s+(?:\*|\{[^}]*\})\s+from\b|#\s*include\b|(?:pub(?:\([^)]*\))?\s+)?use\s|extern\s+crate\b|(?:global\s+)?using\s+(?!\(|var\b|static\s+\w+\s*=)[\w.]+(?:\s*=\s*[\w.<>, ]+)?\s*;?$)/.test(h)) return { kind: "import" };
  if (/^(?:const|let|var)\s+[\w${}\s,:]+=\s*require\s*\(/.test(h)) return { kind: "import" };
  if (/^(?:package\b|namespace\s+[\w.]+\s*;)/.test(h)) return { kind: "package" };
  if (dialect === "go") {
    if ((m = /^func\s*\(\s*(?:\w+\s+)?\*?\s*(\w+)[^)]*\)\s*(\w+)/.exec(h))) return { kind: "def", key: `${m[1]}.${m[2]}`, memberHint: false };
    if ((m = /^func\s+(\w+)/.exec(h))) return { kind: "def", key: m[1], memberHint: false };
    if ((m = /^type\s+(\w+)/.exec(h))) return { kind: "def", key: m[1] };
    if ((m = /^(?:var|const)\s+(\w+)/.exec(h))) return { kind: "value", key: m[1] };
    return { kind: "other" };
  }
  if (dialect === "rust") {
    const r = h.replace(/^pub(?:\([^)]*\))?\s+/, "");
    if ((m = /^(?:default\s+)?(?:unsafe\s+)?impl\b\s*(.*)$/.exec(r))) return { kind: "container", key: `impl ${m[1].split(/\bwhere\b/)[0].replace(/\s+/g, "")}` };
    if ((m = /^(?:(?:const|async|unsafe|default|extern(?:\s+"[^"]*")?)\s+)*fn\s+(\w+)\s*(?:<[^(]*>)?\s*\(\s*(&?\s*(?:'\w+\s+)?(?:mut\s+)?self)?/.exec(r)))
      return { kind: "def", key: m[1], memberHint: m[2] ? true : undefined };
    if ((m = /^(?:unsafe\s+)?trait\s+(\w+)/.exec(r))) return { kind: "container", key: m[1] };
    if ((m = /^mod\s+(\w+)/.exec(r))) return { kind: hasBody ? "container" : "other", key: hasBody ? m[1] : undefined };
    if ((m = /^(?:struct|enum|union|type)\s+(\w+)/.exec(r))) return { kind: "def", key: m[1] };
    if ((m = /^macro_rules!\s*(\w+)/.exec(r))) return { kind: "def", key: m[1] };
    if ((m = /^(?:const|static)\s+(?:mut\s+)?(\w+)/.exec(r))) return { kind: "value", key: m[1] };
    return { kind: "other" };
  }
  let t = h;
  const MODIFIER = /^(?:export|default|declare|public|private|protected|internal|static|abstract|final|sealed|override|virtual|async|readonly|partial|extern|inline|open|data|suspend|fileprivate|mutating|synchronized|native|transient|volatile|new|lateinit|inner|operator|infix|tailrec|actual|expect|constexpr|explicit|friend|implicit|lazy)\s+/;
  while (MODIFIER.test(t)) t = t.replace(MODIFIER, "");
  if ((m = /^(?:const|let|var|val)\s+([\w$]+)/.exec(t))) return { kind: "value", key: m[1] };
  if ((m = /^(?:enum)\s+(?:class\s+|struct\s+)?([\w$]+)/.exec(t))) return { kind: "def", key: m[1] };
  if ((m = /^(?:abstract\s+|data\s+|sealed\s+|case\s+|value\s+|annotation\s+)*(?:class|interface|struct|record|namespace|module|object|trait|union|protocol|extension)\s+([\w$.]+)/.exec(t)))
    return { kind: hasBody ? "container" : "def", key: m[1] };
  if ((m = /^type\s+([\w$]+)/.exec(t))) return { kind: "def", key: m[1] };
  if ((m = /^(function\s*\*?|fun|func|def)\s*(?:<[^>]*>\s*)?([\w$.]+)/.exec(t))) return { kind: "def", key: m[2], memberHint: m[1].startsWith("function") ? false : undefined };
  const paren = t.indexOf("(");
  const cLike = dialect === "java" || dialect === "cs" || dialect === "c" || dialect === "php";
  if (paren > 0 && (hasBody || (cLike && endsWithSemicolon))) {
    const before = t.slice(0, paren).trimEnd();
    const name = /([\w$~]+(?:::[\w$~]+)*)\s*(?:<[^<>]*>)?$/.exec(before);
    const words = before.split(" ").length;
    if (name && !before.includes("=") && !CONTROL_WORDS.has(name[1]) && (hasBody || words >= 2)) {
      // Method syntax (`name(…) {`) in JS, any function in Java/C#: a method; a C function: not.
      return { kind: "def", key: name[1], memberHint: dialect === "c" ? name[1].includes("::") || undefined : dialect === "js" || dialect === "java" || dialect === "cs" || undefined };
    }
  }
  if (member && dialect === "js" && (m = /^(#?[\w$]+)\s*[?!]?\s*(?::[^=(]*)?(?:=|;|$)/.exec(t))) return { kind: "value", key: m[1] };
  return { kind: "other" };
}

function braceUnits(lines: string[], s: string, lineStarts: number[], from: number, to: number, dialect: Dialect, member: boolean): Unit[] {
  const lineOf = (offset: number) => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const units: Unit[] = [];
  for (const st of statements(s, from, to, dialect)) {
    const hasBody = st.open !== undefined && st.close !== undefined;
    const header = s.slice(st.start, hasBody ? st.open : st.end);
    const declLine = lineOf(st.start);
    const endLine = lineOf(Math.max(st.start, st.end - 1)) + 1;
    const named = braceName(header, dialect, hasBody, s.slice(st.start, st.end).trimEnd().endsWith(";"), member);
    const unit: Unit = { ...named, docStart: declLine, start: declLine, declLine, end: endLine, hasBody };
    if (unit.kind === "container" && hasBody) {
      unit.children = braceUnits(lines, s, lineStarts, st.open! + 1, st.close!, dialect, true);
      unit.closeLine = lineOf(st.close!);
    }
    units.push(unit);
  }
  // Decorators, attributes, annotations and doc comments directly above a definition belong to it.
  const isComment = (line: string) => /^(?:\/\/(?!!)|\/\*|\*)/.test(line.trim()) || (dialect === "php" && line.trim().startsWith("#"));
  const isAttribute = (line: string) => /^(?:@[\w.]|#\[)/.test(line.trim()) || (dialect === "cs" && /^\[[A-Z]/.test(line.trim()));
  const kept: Unit[] = [];
  for (const unit of units) {
    if (unit.key) {
      // Attribute-only statements just above are absorbed below: they are no floor.
      let below = kept.length - 1;
      while (below >= 0 && !kept[below].key && lines.slice(kept[below].start, kept[below].end).every(isAttribute)) below--;
      const floor = below >= 0 ? kept[below].end : 0;
      let start = unit.start;
      while (start > floor && isAttribute(lines[start - 1]) && !s.slice(lineStarts[start - 1], lineStarts[start]).includes("{")) start--;
      let doc = start;
      while (doc > floor && (isComment(lines[doc - 1]) || isAttribute(lines[doc - 1])) && !isPlaceholderLine(lines[doc - 1])) doc--;
      // An attribute-only statement we just absorbed is no unit of its own.
      while (kept.length && !kept[kept.length - 1].key && kept[kept.length - 1].start >= doc) kept.pop();
      unit.start = start;
      unit.docStart = doc;
    }
    kept.push(unit);
  }
  return kept;
}

function parse(lines: string[], dialect: Dialect): Unit[] {
  if (dialect === "python") return pythonUnits(lines, scanPython(lines), 0, lines.length, false);
  const text = lines.join("\n");
  const s = blankBrace(text, dialect);
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") lineStarts.push(i + 1);
  return braceUnits(lines, s, lineStarts, 0, s.length, dialect, false);
}

// ---------------------------------------------------------------------------------------------
// Merging a block into a file

export interface MergeResult {
  text: string;
  /** replaced: it redefined something in the file (named in `replaced`); whole: it is the whole file; appended: added at the end. */
  how: "replaced" | "whole" | "appended";
  replaced?: string[];
}

interface Edit {
  start: number;
  end: number;
  lines: string[];
}

/** The block's lines without their common indentation (a method shown alone is indented). */
function dedent(lines: string[]): { lines: string[]; indented: boolean } {
  const widths = lines.filter((l) => l.trim()).map((l) => indentOf(l).length);
  const cut = widths.length ? Math.min(...widths) : 0;
  return { lines: lines.map((l) => (l.trim() ? l.slice(cut) : "")), indented: cut > 0 };
}

/** `lines` moved from their own indentation to `indent`. */
function reindent(lines: string[], indent: string): string[] {
  const first = lines.find((l) => l.trim());
  const own = first ? indentOf(first) : "";
  return lines.map((l) => (!l.trim() ? "" : l.startsWith(own) ? indent + l.slice(own.length) : l));
}

/** One level of indentation as the file writes it. */
function indentUnit(lines: string[], dialect: Dialect): string {
  if (lines.some((l) => l.startsWith("\t"))) return "\t";
  const widths = lines.map((l) => indentOf(l).length).filter((w) => w > 0);
  if (widths.length) return " ".repeat(Math.min(...widths));
  return dialect === "go" ? "\t" : dialect === "python" || dialect === "java" || dialect === "cs" || dialect === "rust" ? "    " : "  ";
}

const normalize = (lines: string[]) => lines.map((l) => l.trim()).filter(Boolean).join("\n");
const isPlaceholderLine = (line: string) => /^(?:\.\.\.|…|pass)$/.test(line.trim()) || /^(?:#|\/\/|\/\*|--)\s*.*(?:\.\.\.|…|existing|unchanged|rest of)/i.test(line.trim());

/** Keys of the named units (definitions, classes, constants). */
const namesOf = (units: Unit[]) => [...new Set(units.filter((u) => u.key && u.kind !== "import" && u.kind !== "package").map((u) => u.key!))];

/** The block keeps most of the file's top-level names (or, for a file of statements, most of its lines): it is the whole file. */
function looksWhole(fileLines: string[], fileUnits: Unit[], blockLines: string[], blockUnits: Unit[]): boolean {
  const fileNames = namesOf(fileUnits);
  const blockNames = new Set(namesOf(blockUnits));
  // A whole file as an answer shows its imports too: a block without them is a part.
  const blockText = new Set(blockLines.map((l) => l.trim()));
  const fileImports = fileUnits.filter((u) => u.kind === "import").flatMap((u) => fileLines.slice(u.start, u.end).map((l) => l.trim()).filter(Boolean));
  if (fileImports.some((l) => !blockText.has(l))) return false;
  // …and the file's other top-level code (a module docstring, a main guard): a block without it is a part.
  const inside = new Set<number>();
  for (const u of fileUnits) if (u.kind !== "other") for (let i = u.docStart; i < u.end; i++) inside.add(i);
  const rest = fileLines.filter((l, i) => !inside.has(i) && l.trim() && !/^(?:#|\/\/)/.test(l.trim())).map((l) => l.trim());
  const restKept = rest.filter((l) => blockText.has(l)).length >= 0.6 * rest.length;
  if (fileNames.length >= 2) return fileNames.filter((k) => blockNames.has(k)).length >= 0.8 * fileNames.length && restKept;
  // One name or none: the names say little; the block must also repeat most of the other code.
  if (fileNames.length === 1 && !blockNames.has(fileNames[0])) return false;
  return rest.length > 0 && restKept;
}

/** Merging one block into one file's lines: collects non-overlapping edits, then applies them at once. */
class Merger {
  readonly edits: Edit[] = [];
  readonly appended: string[][] = [];
  readonly replaced: string[] = [];
  private readonly used = new Set<Unit>();
  private readonly indent: string;

  constructor(
    private readonly fileLines: string[],
    private readonly fileUnits: Unit[],
    private readonly blockLines: string[],
    private readonly dialect: Dialect,
  ) {
    this.indent = indentUnit(fileLines, dialect);
  }

  private text(u: Unit, lines = this.blockLines): string[] {
    return lines.slice(u.docStart, u.end);
  }

  /** The first unused file unit with this key (one with a body first when the block's has one). */
  private find(units: Unit[], u: Unit): Unit | undefined {
    const same = units.filter((f) => f.key === u.key && !this.used.has(f) && f.kind !== "import");
    return same.find((f) => f.hasBody === u.hasBody) ?? same[0];
  }

  /** A method of some class in the file with this name (a block showing one method alone). */
  private findMember(units: Unit[], u: Unit): { unit: Unit; parent: Unit } | undefined {
    for (const parent of units) {
      if (parent.kind !== "container" || !parent.children) continue;
      const unit = this.find(parent.children, u);
      if (unit && unit.kind === "def") return { unit, parent };
      const deeper = this.findMember(parent.children, u);
      if (deeper) return deeper;
    }
    return undefined;
  }

  /** The file unit a named block unit replaces: for a method shown alone its class's first, else the top level's first. */
  private placeFor(u: Unit): { unit: Unit; name: string } | undefined {
    const top = () => {
      const unit = this.find(this.fileUnits, u);
      return unit && { unit, name: u.key! };
    };
    const member = () => {
      if (u.kind !== "def" || u.memberHint === false) return undefined;
      const found = this.findMember(this.fileUnits, u);
      return found && { unit: found.unit, name: `${found.parent.key}.${u.key}` };
    };
    return u.memberHint === true ? (member() ?? top()) : (top() ?? member());
  }

  /** Replace file unit `f` by block unit `u` (keeping `f`'s doc comment when `u` brings none). */
  private replace(f: Unit, u: Unit, name: string): void {
    this.used.add(f);
    const from = u.docStart < u.start ? f.docStart : f.start;
    let lines = reindent(this.blockLines.slice(u.docStart < u.start ? u.docStart : u.start, u.end), indentOf(this.fileLines[f.declLine]));
    // An answer often leaves `export` (`export default`) off the function it shows: keep the file's.
    const exported = this.dialect === "js" ? /^\s*(export\s+(?:default\s+)?)/.exec(this.fileLines[f.declLine]) : null;
    if (exported && !/^\s*export\s/.test(this.blockLines[u.declLine])) {
      const at = u.declLine - (u.docStart < u.start ? u.docStart : u.start);
      lines = lines.map((l, i) => (i === at ? l.replace(/^(\s*)/, `$1${exported[1]}`) : l));
    }
    this.edits.push({ start: from, end: f.end, lines });
    this.replaced.push(name);
  }

  mergeTop(blockUnits: Unit[]): { imports: string[][] } {
    const imports: string[][] = [];
    for (const u of blockUnits) {
      if (u.kind === "import") {
        imports.push(this.text(u));
        continue;
      }
      if (u.kind === "package") continue;
      if (!u.key) {
        this.addUnnamed(u, (lines) => this.appended.push(lines));
        continue;
      }
      const place = this.placeFor(u);
      if (place) this.mergeUnit(place.unit, u, place.name);
      else this.appended.push(this.text(u));
    }
    return { imports };
  }

  /** A statement without a name: kept out when it is a placeholder (`...`) or already in the file. */
  private addUnnamed(u: Unit, add: (lines: string[]) => void): void {
    const lines = this.text(u);
    if (lines.every((l) => !l.trim() || isPlaceholderLine(l))) return;
    if (normalize(this.fileLines).includes(normalize(lines))) return;
    add(lines);
  }

  private mergeUnit(f: Unit, u: Unit, name: string): void {
    const partial =
      f.kind === "container" &&
      u.kind === "container" &&
      f.children &&
      u.children &&
      (namesOf(f.children).some((k) => !u.children!.some((c) => c.key === k)) ||
        this.blockLines.slice(u.declLine + 1, u.end).some(isPlaceholderLine));
    if (!partial) return this.replace(f, u, name);
    // Only some members shown: replace those, add the new ones, keep the rest of the class.
    this.used.add(f);
    const added: string[][] = [];
    for (const c of u.children!) {
      if (!c.key) {
        if (c.kind !== "import") this.addUnnamed(c, (lines) => added.push(lines));
        continue;
      }
      const fc = this.find(f.children!, c);
      if (fc) this.mergeUnit(fc, c, `${name}.${c.key}`);
      else added.push(this.text(c));
    }
    if (!added.length) return;
    const memberIndent = f.children!.length ? indentOf(this.fileLines[f.children![0].declLine]) : indentOf(this.fileLines[f.declLine]) + this.indent;
    const lines = added.flatMap((a) => ["", ...reindent(a, memberIndent)]);
    if (this.dialect === "python") {
      this.edits.push({ start: f.end, end: f.end, lines });
      return;
    }
    const close = f.closeLine;
    if (close === undefined || !this.fileLines[close].trim().startsWith("}")) return this.replace(f, u, name); // `class A { }` on one line
    const before = this.fileLines[close - 1]?.trim() ?? "";
    this.edits.push({ start: close, end: close, lines: before === "" || before.endsWith("{") ? lines.slice(1) : lines });
  }

  /** Where imports the file lacks go: after its last import, else after its package line / docstring / shebang. */
  importEdits(imports: string[][]): void {
    const have = new Set(this.fileUnits.filter((u) => u.kind === "import").map((u) => normalize(this.fileLines.slice(u.start, u.end)).replace(/;$/, "")));
    let missing = imports.filter((lines) => !have.has(normalize(lines).replace(/;$/, "")));
    if (this.dialect === "go") missing = this.goImports(missing);
    if (!missing.length) return;
    const fileImports = this.fileUnits.filter((u) => u.kind === "import");
    const lines = missing.flat();
    if (fileImports.length) {
      const at = fileImports[fileImports.length - 1].end;
      this.edits.push({ start: at, end: at, lines });
      return;
    }
    let at = 0;
    const first = this.fileUnits[0];
    const firstCode = first ? this.fileLines[first.declLine].trim() : "";
    if (first && (first.kind === "package" || (this.dialect === "python" && /^[rRuUbB]*("""|'''|"|')/.test(firstCode)) || /^["']use strict["']/.test(firstCode))) at = first.end;
    else if (this.fileLines[0]?.startsWith("#!")) at = 1;
    const blankBefore = at > 0 && this.fileLines[at - 1]?.trim() ? [""] : [];
    const blankAfter = this.fileLines[at]?.trim() ? [""] : [];
    this.edits.push({ start: at, end: at, lines: [...blankBefore, ...lines, ...blankAfter] });
  }

  /** Go: the block's import specs the file lacks go into the file's `import ( … )` group when it has one. */
  private goImports(missing: string[][]): string[][] {
    const specs = (lines: string[]) => {
      const text = lines.join("\n").replace(/^\s*import\s*/, "");
      const inner = text.startsWith("(") ? text.slice(1, text.lastIndexOf(")")) : text;
      return inner.split("\n").map((l) => l.trim()).filter(Boolean);
    };
    const fileImports = this.fileUnits.filter((u) => u.kind === "import");
    const have = new Set(fileImports.flatMap((u) => specs(this.fileLines.slice(u.start, u.end))));
    const wanted = [...new Set(missing.flatMap(specs))].filter((s) => !have.has(s));
    if (!wanted.length) return [];
    const group = fileImports.find((u) => this.fileLines[u.declLine].includes("("));
    if (group) {
      const close = group.end - 1;
      this.edits.push({ start: close, end: close, lines: wanted.map((s) => `\t${s}`) });
      return [];
    }
    return [wanted.length === 1 ? [`import ${wanted[0]}`] : ["import (", ...wanted.map((s) => `\t${s}`), ")"]];
  }

  apply(): string[] {
    const edits = [...this.edits].sort((a, b) => b.start - a.start || b.end - a.end);
    const out = [...this.fileLines];
    let floor = Infinity;
    for (const e of edits) {
      if (e.end > floor) continue; // overlapping (should not happen): the earlier-placed edit wins
      out.splice(e.start, e.end - e.start, ...e.lines);
      floor = e.start;
    }
    if (!this.appended.length) return out;
    while (out.length && !out[out.length - 1].trim()) out.pop();
    for (const lines of this.appended) out.push(...(out.length ? [""] : []), ...lines);
    out.push("");
    return out;
  }
}

/**
 * `code` merged into `fileText`: definitions the block redefines are replaced in place (methods
 * inside their class), a block that is the whole file replaces it, anything else is appended after
 * one blank line; imports the file lacks go to its top. Line endings follow the file.
 */
export function mergeBlock(fileText: string, code: string, lang: string): MergeResult {
  const crlf = fileText.includes("\r\n");
  const done = (text: string) => (crlf ? text.replace(/\n/g, "\r\n") : text);
  const file = fileText.replace(/\r\n/g, "\n");
  const raw = stripFileComment(code.replace(/\r\n/g, "\n")).replace(/^\s*\n/, "").trimEnd();
  if (!file.trim()) return { text: done(`${raw}\n`), how: "whole" };
  const { lines: blockLines, indented } = dedent(raw.split("\n"));
  const fileLines = file.split("\n");
  const dialect = DIALECTS[lang.trim().toLowerCase()];
  const appendAll = (): MergeResult => ({ text: done(`${file.trimEnd()}\n\n${blockLines.join("\n")}\n`), how: "appended" });
  if (!dialect) {
    const have = new Set(blockLines.map((l) => l.trim()));
    const fileRest = fileLines.filter((l) => l.trim());
    const whole = fileRest.length > 0 && fileRest.filter((l) => have.has(l.trim())).length >= 0.6 * fileRest.length;
    return whole ? { text: done(`${raw}\n`), how: "whole" } : appendAll();
  }
  const fileUnits = parse(fileLines, dialect);
  const blockUnits = parse(blockLines, dialect);
  if (indented) for (const u of blockUnits) if (u.kind === "def") u.memberHint = true;
  if (looksWhole(fileLines, fileUnits, blockLines, blockUnits)) return { text: done(`${blockLines.join("\n")}\n`), how: "whole" };
  const merger = new Merger(fileLines, fileUnits, blockLines, dialect);
  const { imports } = merger.mergeTop(blockUnits);
  merger.importEdits(imports);
  const text = done(merger.apply().join("\n"));
  return merger.replaced.length ? { text, how: "replaced", replaced: merger.replaced } : { text, how: "appended" };
}
