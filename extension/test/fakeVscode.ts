/**
 * A small stand-in for the `vscode` module, enough for the features that send code (trust gate,
 * chat, inline edit, next edit, inline completions, settings). A test mocks `vscode` with it:
 *
 *   vi.mock("vscode", async () => (await import("./fakeVscode")).vscode);
 *
 * and drives it through `fake`: the workspace's trust, the settings' layers, the answer to the
 * trust question, the open document and editor, and the listeners the features registered.
 */

type Listener<T> = (e: T) => unknown;

/** A terminal: what was typed into it; `shellIntegration` is set by a test once its shell reports commands. */
export interface FakeTerminal {
  name: string;
  sent: string[];
  exitStatus: undefined | { code: number };
  shellIntegration: undefined | object;
  show: () => void;
  sendText: (t: string) => void;
}

/** Shell integration's report of a command: its line, its output stream (start) and exit code (end). */
export interface ShellExecutionEvent {
  terminal: FakeTerminal;
  execution?: { commandLine: { value: string }; read: () => AsyncIterable<string> };
  exitCode?: number;
}

export class EventEmitter<T> {
  private listeners: Listener<T>[] = [];
  readonly event = (l: Listener<T>) => {
    this.listeners.push(l);
    return { dispose: () => (this.listeners = this.listeners.filter((x) => x !== l)) };
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class Position {
  constructor(readonly line: number, readonly character: number) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: number | Position, b: number | Position, c?: number, d?: number) {
    this.start = typeof a === "number" ? new Position(a, b as number) : a;
    this.end = typeof a === "number" ? new Position(c as number, d as number) : (b as Position);
  }
  get isEmpty(): boolean {
    return this.start.line === this.end.line && this.start.character === this.end.character;
  }
}

export class Selection extends Range {
  get active(): Position {
    return this.end;
  }
}

export class Uri {
  private constructor(readonly scheme: string, readonly path: string) {}
  static parse(s: string): Uri {
    const i = s.indexOf(":");
    return new Uri(s.slice(0, i), s.slice(i + 1).replace(/^\/\//, ""));
  }
  static file(p: string): Uri {
    return new Uri("file", p);
  }
  static joinPath(u: Uri, ...parts: string[]): Uri {
    return new Uri(u.scheme, [u.path, ...parts].join("/"));
  }
  /** Built from parts (the query is kept apart from the path, as VS Code does). */
  static from(parts: { scheme: string; path: string; query?: string }): Uri {
    const uri = new Uri(parts.scheme, parts.path);
    (uri as { query?: string }).query = parts.query ?? "";
    return uri;
  }
  get fsPath(): string {
    return this.path;
  }
  with(change: { path?: string }): Uri {
    return new Uri(this.scheme, change.path ?? this.path);
  }
  toString(): string {
    const query = (this as { query?: string }).query;
    return `${this.scheme}://${this.path}${query ? `?${query}` : ""}`;
  }
}

/** The input of a text tab (TabInputText) and of a diff tab (TabInputTextDiff). */
export class TabInputText {
  constructor(readonly uri: Uri) {}
}
export class TabInputTextDiff {
  constructor(readonly original: Uri, readonly modified: Uri) {}
}

/** A WorkspaceEdit that records its entries (replace/insert/createFile) with their metadata. */
export class WorkspaceEdit {
  readonly entries: { op: "replace" | "insert" | "createFile"; uri: Uri; range?: Range; text?: string; options?: unknown; metadata?: unknown }[] = [];
  get size(): number {
    return new Set(this.entries.map((e) => e.uri.toString())).size;
  }
  replace(uri: Uri, range: Range, text: string, metadata?: unknown): void {
    this.entries.push({ op: "replace", uri, range, text, metadata });
  }
  insert(uri: Uri, position: Position, text: string, metadata?: unknown): void {
    this.entries.push({ op: "insert", uri, range: new Range(position, position), text, metadata });
  }
  createFile(uri: Uri, options?: unknown, metadata?: unknown): void {
    this.entries.push({ op: "createFile", uri, options, metadata });
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

const disposable = { dispose: () => undefined };

/** A text document with a fixed text (enough for the features' reads). */
export function textDocument(path: string, text: string, languageId = "python") {
  const lines = text.split("\n");
  const offsetAt = (p: Position) => lines.slice(0, p.line).reduce((n, l) => n + l.length + 1, 0) + p.character;
  return {
    uri: Uri.file(path),
    fileName: path,
    languageId,
    version: 1,
    lineCount: lines.length,
    getText: (r?: Range) => (r ? text.slice(offsetAt(r.start), offsetAt(r.end)) : text),
    lineAt: (n: number) => ({ text: lines[n] ?? "" }),
    offsetAt,
    positionAt: (o: number) => {
      let line = 0;
      while (line < lines.length - 1 && o > lines[line].length) o -= lines[line++].length + 1;
      return new Position(line, o);
    },
  };
}

export type FakeDocument = ReturnType<typeof textDocument>;

/** The settings as VS Code layers them: default < user (global) < workspace < folder. */
export interface Layers {
  defaultValue?: unknown;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

export const fake = {
  trusted: false,
  /** `kestrel.*` settings by key (without the `kestrel.` prefix). */
  settings: {} as Record<string, Layers>,
  /** What the user answers to a warning message (the trust question); undefined closes it. */
  answer: undefined as string | undefined,
  warnings: [] as string[],
  /** Each warning's options ({ modal, detail }) and buttons, in the order shown. */
  warningCalls: [] as { message: string; options: unknown; items: string[] }[],
  errors: [] as string[],
  activeTextEditor: undefined as unknown,
  documents: new Map<string, FakeDocument>(),
  commands: new Map<string, (...args: unknown[]) => unknown>(),
  onDidChangeTextDocument: new EventEmitter<unknown>(),
  inputBoxes: [] as ReturnType<typeof inputBox>[],
  /** Added for the chat: the editor's events, its tabs, the workspace folders, what the user answers. */
  onDidChangeActiveTextEditor: new EventEmitter<unknown>(),
  onDidChangeTextEditorSelection: new EventEmitter<unknown>(),
  onDidChangeTabs: new EventEmitter<unknown>(),
  onDidChangeDiagnostics: new EventEmitter<unknown>(),
  /** The text tabs open (all in one group), by URI. */
  tabs: [] as Uri[],
  workspaceFolders: [] as { uri: Uri; name: string; index: number }[],
  /** What the user answers to an information message (the review toasts); undefined closes it. */
  infoAnswer: undefined as string | undefined,
  infos: [] as string[],
  /** What the user types into showInputBox; undefined is Escape. */
  inputBoxAnswer: undefined as string | undefined,
  inputBoxOptions: [] as unknown[],
  /** Every executeCommand call, and every WorkspaceEdit applied. */
  executed: [] as { command: string; args: unknown[] }[],
  applied: [] as WorkspaceEdit[],
  diagnostics: [] as { range: Range; message: string }[],
  /** Added for mentions: the workspace's files (findFiles), files on disk only (path → text), every
   * file's diagnostics, the symbols the providers answer, the watchers, the Git extension's exports. */
  files: [] as Uri[],
  disk: new Map<string, string>(),
  allDiagnostics: [] as [Uri, { range: Range; message: string; severity?: number; source?: string }[]][],
  workspaceSymbols: [] as { name: string; kind: number; containerName?: string; location: { uri: Uri; range: Range } }[],
  documentSymbols: new Map<string, unknown[]>(),
  watchers: [] as { create: EventEmitter<Uri>; remove: EventEmitter<Uri> }[],
  git: undefined as unknown,
  onDidChangeConfiguration: new EventEmitter<unknown>(),
  terminals: [] as FakeTerminal[],
  /** Shell integration's reports: a command started / ended in a terminal (fired by a test). */
  onDidStartTerminalShellExecution: new EventEmitter<ShellExecutionEvent>(),
  onDidEndTerminalShellExecution: new EventEmitter<ShellExecutionEvent>(),
  onDidCloseTerminal: new EventEmitter<FakeTerminal>(),
  clipboard: "",
  reset(): void {
    this.trusted = false;
    this.settings = {};
    this.answer = undefined;
    this.warnings = [];
    this.warningCalls = [];
    this.errors = [];
    this.activeTextEditor = undefined;
    this.documents.clear();
    this.commands.clear();
    this.onDidChangeTextDocument = new EventEmitter<unknown>();
    this.inputBoxes = [];
    this.onDidChangeActiveTextEditor = new EventEmitter<unknown>();
    this.onDidChangeTextEditorSelection = new EventEmitter<unknown>();
    this.onDidChangeTabs = new EventEmitter<unknown>();
    this.onDidChangeDiagnostics = new EventEmitter<unknown>();
    this.tabs = [];
    this.workspaceFolders = [];
    this.infoAnswer = undefined;
    this.infos = [];
    this.inputBoxAnswer = undefined;
    this.inputBoxOptions = [];
    this.executed = [];
    this.applied = [];
    this.diagnostics = [];
    this.files = [];
    this.disk = new Map();
    this.allDiagnostics = [];
    this.workspaceSymbols = [];
    this.documentSymbols = new Map();
    this.watchers = [];
    this.git = undefined;
    this.onDidChangeConfiguration = new EventEmitter<unknown>();
    this.terminals = [];
    this.onDidStartTerminalShellExecution = new EventEmitter<ShellExecutionEvent>();
    this.onDidEndTerminalShellExecution = new EventEmitter<ShellExecutionEvent>();
    this.onDidCloseTerminal = new EventEmitter<FakeTerminal>();
    this.clipboard = "";
  },
};

function inputBox() {
  const accept = new EventEmitter<void>();
  const hide = new EventEmitter<void>();
  return {
    value: "",
    title: "",
    placeholder: "",
    busy: false,
    ignoreFocusOut: false,
    validationMessage: undefined as string | undefined,
    onDidAccept: accept.event,
    onDidHide: hide.event,
    show: () => undefined,
    hide: () => hide.fire(),
    dispose: () => undefined,
    /** The user types `text` and presses Enter. */
    enter(text: string) {
      this.value = text;
      accept.fire();
    },
  };
}

function effective(l: Layers | undefined): unknown {
  if (!l) return undefined;
  for (const v of [l.workspaceFolderValue, l.workspaceValue, l.globalValue, l.defaultValue]) if (v !== undefined) return v;
  return undefined;
}

/** VS Code's `WorkspaceConfiguration` over `fake.settings`, frozen like the real one. */
export function configuration() {
  return Object.freeze({
    get: (key: string, fallback?: unknown) => effective(fake.settings[key]) ?? fallback,
    has: (key: string) => effective(fake.settings[key]) !== undefined,
    inspect: (key: string) => ({ key: `kestrel.${key}`, ...fake.settings[key] }),
    update: async () => undefined,
  });
}

export const vscode = {
  EventEmitter,
  Position,
  Range,
  Selection,
  Uri,
  ThemeColor,
  TabInputText,
  TabInputTextDiff,
  WorkspaceEdit,
  ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
  FileType: { Unknown: 0, File: 1, Directory: 2, SymbolicLink: 64 },
  InlineCompletionTriggerKind: { Invoke: 0, Automatic: 1 },
  ViewColumn: { Beside: -2 },
  TextEditorRevealType: { InCenterIfOutsideViewport: 2 },
  workspace: {
    get isTrusted() {
      return fake.trusted;
    },
    getConfiguration: () => configuration(),
    onDidChangeTextDocument: (l: Listener<unknown>) => fake.onDidChangeTextDocument.event(l),
    registerTextDocumentContentProvider: () => disposable,
    openTextDocument: async (uri: Uri) => {
      const doc = fake.documents.get(uri.toString());
      if (!doc) throw new Error(`no document ${uri.toString()}`);
      return doc;
    },
    /** Relative to its workspace folder; the name alone outside any (or without folders). */
    asRelativePath: (uri: Uri) => {
      const folder = fake.workspaceFolders.find((f) => uri.path.startsWith(`${f.uri.path}/`));
      return folder ? uri.path.slice(folder.uri.path.length + 1) : (uri.path.split("/").pop() ?? uri.path);
    },
    onDidChangeConfiguration: (l: Listener<unknown>) => fake.onDidChangeConfiguration.event(l),
    onDidChangeWorkspaceFolders: () => disposable,
    findFiles: async () => [...fake.files],
    createFileSystemWatcher: () => {
      const w = { create: new EventEmitter<Uri>(), remove: new EventEmitter<Uri>() };
      fake.watchers.push(w);
      return { onDidCreate: w.create.event, onDidDelete: w.remove.event, onDidChange: () => disposable, dispose: () => undefined };
    },
    get textDocuments() {
      return [...fake.documents.values()];
    },
    get workspaceFolders() {
      return fake.workspaceFolders.length ? fake.workspaceFolders : undefined;
    },
    getWorkspaceFolder: (uri: Uri) => fake.workspaceFolders.find((f) => uri.path.startsWith(`${f.uri.path}/`)),
    fs: {
      stat: async (uri: Uri) => {
        const text = fake.disk.get(uri.path) ?? fake.documents.get(uri.toString())?.getText();
        if (text !== undefined) return { type: 1, size: text.length };
        if ([...fake.disk.keys()].some((p) => p.startsWith(`${uri.path}/`))) return { type: 2, size: 0 };
        throw new Error(`no file ${uri.toString()}`);
      },
      readFile: async (uri: Uri) => {
        const text = fake.disk.get(uri.path);
        if (text === undefined) throw new Error(`no file ${uri.toString()}`);
        return new TextEncoder().encode(text);
      },
    },
    applyEdit: async (edit: WorkspaceEdit) => {
      fake.applied.push(edit);
      return true;
    },
  },
  window: {
    get activeTextEditor() {
      return fake.activeTextEditor;
    },
    get visibleTextEditors() {
      return fake.activeTextEditor ? [fake.activeTextEditor] : [];
    },
    tabGroups: {
      get all() {
        return fake.tabs.length ? [{ tabs: fake.tabs.map((uri) => ({ input: new TabInputText(uri) })) }] : [];
      },
      onDidChangeTabs: (l: Listener<unknown>) => fake.onDidChangeTabs.event(l),
      close: async () => true,
    },
    onDidChangeActiveTextEditor: (l: Listener<unknown>) => fake.onDidChangeActiveTextEditor.event(l),
    onDidChangeTextEditorSelection: (l: Listener<unknown>) => fake.onDidChangeTextEditorSelection.event(l),
    showInputBox: async (options: unknown) => {
      fake.inputBoxOptions.push(options);
      return fake.inputBoxAnswer;
    },
    showTextDocument: async () => undefined,
    get terminals() {
      return fake.terminals;
    },
    onDidStartTerminalShellExecution: (l: Listener<ShellExecutionEvent>) => fake.onDidStartTerminalShellExecution.event(l),
    onDidEndTerminalShellExecution: (l: Listener<ShellExecutionEvent>) => fake.onDidEndTerminalShellExecution.event(l),
    onDidCloseTerminal: (l: Listener<FakeTerminal>) => fake.onDidCloseTerminal.event(l),
    createTerminal: (options: { name: string }) => {
      const terminal: FakeTerminal = {
        name: options.name,
        sent: [] as string[],
        exitStatus: undefined,
        shellIntegration: undefined,
        show: () => undefined,
        sendText(text: string) {
          this.sent.push(text);
        },
      };
      fake.terminals.push(terminal);
      return terminal;
    },
    showWarningMessage: async (message: string, ...rest: unknown[]) => {
      fake.warnings.push(message);
      const options = rest.length && typeof rest[0] === "object" ? rest.shift() : undefined;
      fake.warningCalls.push({ message, options, items: rest as string[] });
      return fake.answer;
    },
    showErrorMessage: async (message: string) => {
      fake.errors.push(message);
      return undefined;
    },
    showInformationMessage: async (message: string) => {
      fake.infos.push(message);
      return fake.infoAnswer;
    },
    setStatusBarMessage: () => disposable,
    createTextEditorDecorationType: () => disposable,
    createInputBox: () => {
      const box = inputBox();
      fake.inputBoxes.push(box);
      return box;
    },
  },
  commands: {
    registerCommand: (id: string, f: (...args: unknown[]) => unknown) => {
      fake.commands.set(id, f);
      return disposable;
    },
    executeCommand: async (command: string, ...args: unknown[]) => {
      fake.executed.push({ command, args });
      if (command === "vscode.executeWorkspaceSymbolProvider") {
        const q = String(args[0] ?? "").toLowerCase();
        return fake.workspaceSymbols.filter((s) => s.name.toLowerCase().includes(q));
      }
      if (command === "vscode.executeDocumentSymbolProvider") return fake.documentSymbols.get(String(args[0]));
      return undefined;
    },
  },
  languages: {
    getDiagnostics: (uri?: Uri) => (uri ? fake.diagnostics : fake.allDiagnostics),
    onDidChangeDiagnostics: (l: Listener<unknown>) => fake.onDidChangeDiagnostics.event(l),
  },
  extensions: {
    getExtension: (id: string) => (id === "vscode.git" && fake.git ? { isActive: true, exports: fake.git } : undefined),
  },
  env: {
    clipboard: {
      writeText: async (text: string) => {
        fake.clipboard = text;
      },
    },
  },
};

/** An editor on `doc` with `selection`, made the active one. */
export function openEditor(doc: FakeDocument, selection = new Selection(0, 0, 0, 0)) {
  fake.documents.set(doc.uri.toString(), doc);
  const editor = { document: doc, selection, setDecorations: () => undefined, revealRange: () => undefined };
  fake.activeTextEditor = editor;
  return editor;
}
