/**
 * The workspace's files for the mention picker, cached in the extension host: listed once
 * (`findFiles`, the first time the chat panel is ready), then kept current by a FileSystemWatcher
 * (a burst of events, such as a checkout, lists again instead) and listed again when an exclude
 * setting changes. A keystroke in the picker filters this list (fileRank.ts), never the disk.
 *
 * Never listed: secret files (secretFiles.ts), files under `files.exclude` / `search.exclude` or
 * ignored by a workspace folder's `.gitignore` (as Quick Open hides them, with `search.useIgnoreFiles`)
 * and files under `kestrel.completion.excludeGlobs` (as the server reads it).
 * `mayAttach` is the check a send makes again, whatever the picker offered.
 */
import * as vscode from "vscode";
import { isSecretPath } from "../secretFiles";
import { pathEntry, type PathEntry } from "./fileRank";
import { PathExcluder, UserGlobs, enabledPatterns, findFilesExclude, gitignoreGlobs } from "./globs";

export interface FileEntry extends PathEntry {
  uri: vscode.Uri;
}

/** At most this many files are listed (a bigger workspace is filtered over its first ones). */
export const MAX_FILES = 50_000;
/** More watcher events than this in one burst: list again rather than stat each. */
const BURST = 300;
const SETTLE_MS = 150;
/** `.gitignore` files read for the picker (a monorepo has dozens; beyond this many, the rest are not). */
const MAX_GITIGNORES = 200;

const depth = (rel: string) => rel.split("/").length;
const relative = (uri: vscode.Uri) => vscode.workspace.asRelativePath(uri, (vscode.workspace.workspaceFolders?.length ?? 0) > 1);

/** Exclusion as configured now (read once per listing). */
export class Exclusions {
  readonly picker: PathExcluder;
  readonly user: UserGlobs;
  readonly findFilesExclude: string | undefined;

  constructor(ignored: readonly string[] = []) {
    const files = enabledPatterns(vscode.workspace.getConfiguration("files").get("exclude"));
    const search = enabledPatterns(vscode.workspace.getConfiguration("search").get("exclude"));
    const globs = vscode.workspace.getConfiguration("kestrel").get<string[]>("completion.excludeGlobs") ?? [];
    const hidden = [...files, ...search, ...ignored];
    this.picker = new PathExcluder(hidden);
    this.user = new UserGlobs(Array.isArray(globs) ? globs.filter((g) => typeof g === "string") : []);
    this.findFilesExclude = findFilesExclude(hidden);
  }

  /** With the patterns of every `.gitignore` in the workspace (a nested one for what is below it),
   * unless `search.useIgnoreFiles` is off. */
  static async read(): Promise<Exclusions> {
    const ignored: string[] = [];
    if (vscode.workspace.getConfiguration("search").get<boolean>("useIgnoreFiles") !== false) {
      const found = await vscode.workspace.findFiles("**/.gitignore", "**/{node_modules,.git}/**", MAX_GITIGNORES);
      for (const uri of found.filter((u) => u.path.endsWith("/.gitignore"))) {
        const rel = vscode.workspace.asRelativePath(uri, false);
        try {
          const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
          ignored.push(...gitignoreGlobs(text, rel.slice(0, -".gitignore".length)));
        } catch {
          // gone since it was listed
        }
      }
    }
    return new Exclusions(ignored);
  }

  /** Never sent to a model: a secret file, or one the user's excludeGlobs name. */
  refuses(uri: vscode.Uri): string | undefined {
    if (isSecretPath(uri.path)) return "a secret file";
    if (this.user.excludes(uri.scheme === "file" ? uri.fsPath : uri.path)) return "excluded by kestrel.completion.excludeGlobs";
    return undefined;
  }

  /** The picker offers it: not refused, and not hidden by files.exclude / search.exclude. */
  offers(uri: vscode.Uri, rel: string): boolean {
    return !this.refuses(uri) && !this.picker.excludes(rel);
  }
}

export class WorkspaceFiles implements vscode.Disposable {
  private files = new Map<string, FileEntry>();
  private list: FileEntry[] | undefined;
  private folderList: FileEntry[] | undefined;
  private shallow: FileEntry[] | undefined;
  private byRelPath: Map<string, FileEntry> | undefined;
  private loading: Promise<void> | undefined;
  private firstListing: Promise<void> | undefined;
  private generation = 0;
  private exclusions = new Exclusions();
  private watcher: vscode.FileSystemWatcher | undefined;
  private readonly subs: vscode.Disposable[] = [];
  private created = new Set<string>();
  private removed = new Set<string>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** How long the last full listing took (ms), and how many files it found. */
  lastListing: { ms: number; files: number } | undefined;

  constructor() {
    this.subs.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (["files.exclude", "search.exclude", "kestrel.completion.excludeGlobs"].some((k) => e.affectsConfiguration(k))) this.reload();
      }),
      vscode.workspace.onDidChangeWorkspaceFolders(() => this.reload()),
    );
  }

  dispose(): void {
    this.generation++;
    this.loading = undefined;
    if (this.timer) clearTimeout(this.timer);
    this.watcher?.dispose();
    this.subs.forEach((s) => s.dispose());
  }

  /** The exclusion rules in force (the send-time check uses them too). */
  get rules(): Exclusions {
    return this.exclusions;
  }

  /**
   * Resolves once the files were listed (starts the listing and the watcher the first time). A later
   * listing (settings changed, a burst of events) does not make it wait: the list in hand serves until then.
   */
  ready(): Promise<void> {
    if (!this.firstListing) {
      this.watch();
      this.firstListing = this.loading = this.load();
    }
    return this.firstListing;
  }

  /** Every listed file (unsorted: the picker ranks them). */
  entries(): FileEntry[] {
    return (this.list ??= [...this.files.values()]);
  }

  /** The folders that hold listed files (a folder with nothing listable is not offered). */
  folders(): FileEntry[] {
    if (this.folderList) return this.folderList;
    const seen = new Map<string, FileEntry>();
    for (const f of this.files.values()) {
      let rel = f.rel;
      for (let cut = rel.lastIndexOf("/"); cut > 0; cut = rel.lastIndexOf("/")) {
        rel = rel.slice(0, cut);
        if (seen.has(rel)) break;
        // The folder's URI: the file's path without the part of `rel` after the folder.
        const tail = f.rel.length - rel.length;
        seen.set(rel, { ...pathEntry(rel), uri: f.uri.with({ path: `${f.uri.path.slice(0, f.uri.path.length - tail)}/` }) });
      }
    }
    return (this.folderList = [...seen.values()]);
  }

  /** A listed file by its workspace-relative path (a typed `#file:path`). */
  byRel(rel: string): FileEntry | undefined {
    if (!this.byRelPath) {
      this.byRelPath = new Map();
      for (const f of this.files.values()) this.byRelPath.set(f.rel, f);
    }
    return this.byRelPath.get(rel.replace(/\\/g, "/").replace(/^\.\//, ""));
  }

  get(uri: vscode.Uri): FileEntry | undefined {
    return this.files.get(uri.toString());
  }

  /** The first `limit` files nearest the root (what the picker lists before anything is typed). */
  shallowFirst(limit: number): FileEntry[] {
    this.shallow ??= [...this.entries()].sort((a, b) => depth(a.rel) - depth(b.rel) || (a.lower < b.lower ? -1 : a.lower > b.lower ? 1 : 0)).slice(0, 200);
    return this.shallow.slice(0, limit);
  }

  private changed(): void {
    this.list = undefined;
    this.shallow = undefined;
    this.folderList = undefined;
    this.byRelPath = undefined;
  }

  private entry(uri: vscode.Uri): FileEntry | undefined {
    const rel = relative(uri);
    return this.exclusions.offers(uri, rel) ? { ...pathEntry(rel), uri } : undefined;
  }

  private async load(): Promise<void> {
    const generation = ++this.generation;
    const started = Date.now();
    const exclusions = await Exclusions.read();
    if (generation !== this.generation) return this.loading;
    this.exclusions = exclusions;
    let uris: vscode.Uri[] = [];
    try {
      uris = await vscode.workspace.findFiles("**/*", this.exclusions.findFilesExclude, MAX_FILES);
    } catch {
      uris = []; // no folder open, or the search service is down: the picker offers no files
    }
    if (generation !== this.generation) return this.loading; // a newer listing started: done when it is
    const files = new Map<string, FileEntry>();
    for (const uri of uris) {
      const e = this.entry(uri);
      if (e) files.set(uri.toString(), e);
    }
    this.files = files;
    this.created.clear();
    this.changed();
    this.lastListing = { ms: Date.now() - started, files: files.size };
  }

  /** Lists again (a setting or the folders changed, or a burst of events). */
  private reload(): void {
    if (!this.loading) return; // nobody asked yet: the first listing reads the new settings
    this.loading = this.load();
  }

  private watch(): void {
    const w = vscode.workspace.createFileSystemWatcher("**/*", false, false, false);
    this.watcher = w;
    const gitignore = (uri: vscode.Uri) => uri.path.endsWith("/.gitignore");
    w.onDidCreate((uri) => {
      if (gitignore(uri)) return this.reload();
      this.created.add(uri.toString());
      this.settleSoon();
    });
    w.onDidChange((uri) => {
      if (gitignore(uri)) this.reload();
    });
    w.onDidDelete((uri) => {
      if (gitignore(uri)) return this.reload();
      this.created.delete(uri.toString());
      this.removed.add(uri.toString());
      this.settleSoon();
    });
  }

  /** Deleted paths: files go; a path that was no file is a folder, and everything under it goes. */
  private dropRemoved(removed: string[]): boolean {
    let changed = false;
    const folders: string[] = [];
    for (const key of removed) {
      if (this.files.delete(key)) changed = true;
      else folders.push(key.endsWith("/") ? key : `${key}/`);
    }
    if (folders.length) {
      for (const key of this.files.keys()) {
        if (folders.some((f) => key.startsWith(f))) {
          this.files.delete(key);
          changed = true;
        }
      }
    }
    return changed;
  }

  private settleSoon(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.settle();
    }, SETTLE_MS);
  }

  /** New paths: a few are checked one by one (a folder is not a file), a burst lists everything again. */
  private async settle(): Promise<void> {
    const created = [...this.created];
    const removed = [...this.removed];
    this.created.clear();
    this.removed.clear();
    if (created.length + removed.length > BURST) return this.reload();
    if (removed.length && this.dropRemoved(removed)) this.changed();
    if (!created.length) return;
    const generation = this.generation;
    let added = false;
    let folder = false;
    await Promise.all(
      created.map(async (key) => {
        const uri = vscode.Uri.parse(key);
        try {
          const stat = await vscode.workspace.fs.stat(uri);
          if (generation !== this.generation) return;
          // A folder moved or copied in: its files came with it, and a watcher may report only the folder.
          if (stat.type & vscode.FileType.Directory) folder = true;
          else {
            const e = this.entry(uri);
            if (e && !this.files.has(key) && this.files.size < MAX_FILES) {
              this.files.set(key, e);
              added = true;
            }
          }
        } catch {
          // gone again already
        }
      }),
    );
    if (generation !== this.generation) return;
    if (folder) return this.reload();
    if (added) this.changed();
  }
}
