"""Search over the workspace's code for chat: every file the user may send (`.gitignore`, secret
files and excludeGlobs honoured), cut into syntax-bounded chunks (code_chunks.py) in an SQLite FTS5
table (BM25) beside a table of definitions; a question fuses both rankings (reciprocal rank). The
database lives in the user's private cache, one per set of workspace folders, keyed by content
hash: a restart re-reads only what changed, a save re-indexes one file.
Why: docs/design-notes.md#pyserverkestrelcontextcodebase_indexpy
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from .code_chunks import chunk_file
from .exclusion import SOURCE_SUFFIXES, is_excluded_path
from .workspace_index import MAX_FILE_BYTES, SKIPPED_DIRS, WorkspaceIndex

if TYPE_CHECKING:
    import sqlite3

log = logging.getLogger(__name__)

SCHEMA_VERSION = 4
MAX_INDEXED_FILES = 50_000
INDEXED_SUFFIXES = frozenset(("." + s for s in SOURCE_SUFFIXES)) | {".pyi", ".toml", ".cfg", ".ini"}
FILE_SUFFIXES = frozenset(s.lstrip(".") for s in INDEXED_SUFFIXES) | {"json", "yaml", "yml", "txt", "html", "css"}
MAX_AVERAGE_LINE = 300  # longer lines on average: minified or generated, not code to quote
MAX_TERMS = 32  # the rarest of a question's terms that are searched for
COMMON_SHARE = 0.5  # a term in more of the chunks than this share is too common to search for
COMMON_CHUNKS = 50  # ... unless the workspace is so small that it is in at most this many
RRF_K = 60  # reciprocal rank fusion's constant (Cormack et al.): rank 1 counts 1/61
COMMIT_EVERY = 200  # files written per transaction while indexing (a search waits for at most one)

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_BACKTICKED = re.compile(r"`([^`\n]{1,80})`")
# Words a question is made of that say nothing about where the answer is.
STOPWORDS = frozenset("""
a an the and or not no of to in on at by for from with without into onto as is are was were be been being
do does did done doing have has had having it its this that these those there here what which who whom whose
when where why how than then so such can could should would will shall may might must i me my we our you your
he she they them their his her if else elif while about above below over under between through during after
before again further once any all both each few more most other some own same too very just also only but
because until up down out off use used uses using work works working happen happens get gets set sets
defined define defines definition implement implemented implements implementation function functions method
methods class classes file files code module modules call calls called calling return returns value values
codebase repository repo project make makes made handle handles handled way ways role purpose mean means
""".split())


@dataclass(frozen=True)
class Hit:
    """A chunk found for a question."""

    path: str  # relative to its workspace folder
    root: str  # the workspace folder
    start: int  # first line, 0-based
    end: int  # last line, inclusive
    name: str  # the definition the chunk holds, or ""
    text: str
    score: float

    @property
    def file(self) -> Path:
        return Path(self.root) / self.path


def _parts(word: str) -> list[str]:
    """An identifier's snake_case and camelCase parts, lower-cased (`parseDue_at` -> parse, due, at)."""
    return [p.lower() for piece in word.split("_") for p in _CAMEL.findall(piece)]


def words(text: str) -> list[str]:
    """The search terms of a text: its identifiers and their parts, lower-cased."""
    out: list[str] = []
    for word in _WORD.findall(text):
        out.append(word.lower())
        parts = _parts(word)
        if len(parts) > 1:
            out.extend(parts)
    return out


def code_names(question: str) -> list[str]:
    """Identifiers a question names as code: backticked, or shaped like code (`snake_case`,
    `camelCase`, `Class.method`, `call()`), in the order they appear."""
    found: list[str] = []
    for span in _BACKTICKED.findall(question):
        found.extend(_WORD.findall(span.split("(")[0]))
    for match in re.finditer(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(\(\))?", question):
        token = match.group(0).removesuffix("()")
        if "." in token and token.rsplit(".", 1)[1].lower() in FILE_SUFFIXES:
            continue  # `utils.py` names a file, not code
        for part in token.split("."):
            if ("_" in part.strip("_") or re.search(r"[a-z][A-Z]", part) or match.group(1)
                    or (re.match(r"[A-Z][a-z]+[A-Z]", part)) or "." in token):
                found.append(part)
    seen: set[str] = set()
    return [n for n in found if not (n in seen or seen.add(n)) and n.lower() not in STOPWORDS and len(n) > 1]


def _like(text: str) -> str:
    """`text` as a literal inside an SQL LIKE pattern (ESCAPE '\\')."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _terms_of(text: str) -> str:
    """The split forms of a chunk's identifiers (FTS5's tokenizer keeps `parseDue` whole)."""
    extra = []
    for word in set(_WORD.findall(text)):
        parts = _parts(word)
        if len(parts) > 1:
            extra.extend(parts)
    return " ".join(extra)


class GitIgnore:
    """The `.gitignore` files met on the way down a folder (pathspec's git semantics)."""

    def __init__(self) -> None:
        self._specs: dict[Path, object] = {}

    def load(self, folder: Path) -> None:
        file = folder / ".gitignore"
        if file.is_file():
            try:
                import pathspec

                self._specs[folder] = pathspec.GitIgnoreSpec.from_lines(file.read_text("utf-8", "replace").splitlines())
            except (OSError, ValueError):
                log.debug("unreadable %s", file, exc_info=True)

    def ignored(self, path: Path, is_dir: bool = False) -> bool:
        for folder, spec in self._specs.items():
            if folder == path or folder not in path.parents:
                continue
            rel = path.relative_to(folder).as_posix() + ("/" if is_dir else "")
            if spec.match_file(rel):  # type: ignore[attr-defined]
                return True
        return False


class CodebaseIndex:
    def __init__(self, workspace: WorkspaceIndex, cache_dir: Callable[[], Path | None] | Path | None) -> None:
        """`cache_dir`: where the database of each set of folders lives, or what finds it when first
        needed (None: in memory only)."""
        self.workspace = workspace
        self._cache_dir = cache_dir
        self._lock = threading.RLock()  # one connection, shared by the worker threads
        self._refreshing = threading.Lock()  # one refresh at a time (a second waits, then finds little to do)
        self._db: sqlite3.Connection | None = None
        self._db_roots: tuple[Path, ...] | None = None
        self.ready = threading.Event()  # set when the first full pass has finished
        self.last_refresh: dict[str, float] = {}

    # -- the database -------------------------------------------------------------------------
    def _database_path(self, roots: tuple[Path, ...]) -> Path | None:
        if callable(self._cache_dir):
            self._cache_dir = self._cache_dir()
        if self._cache_dir is None:
            return None
        key = hashlib.sha256("\0".join(str(r) for r in roots).encode()).hexdigest()[:24]
        return self._cache_dir / f"codebase-{key}.sqlite3"

    def _connect(self) -> sqlite3.Connection | None:
        """The database of the current folders (opened, or made, on first use)."""
        roots = self.workspace.roots
        if not roots:
            return None
        if self._db is not None and self._db_roots == roots:
            return self._db
        import sqlite3  # here, not at import: the server's start-up does not pay for it

        if self._db is not None:
            self._db.close()
        path = self._database_path(roots)
        target = ":memory:"
        if path is not None:
            try:
                # The folder is private (local.cache.private_dir); the file is made ours and owner-only,
                # never followed through a link: the index holds the user's code.
                fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW, 0o600)
                try:
                    st = os.fstat(fd)
                    if st.st_uid != os.getuid() or st.st_mode & 0o077:
                        raise OSError(f"{path} is not private to this user")
                finally:
                    os.close(fd)
                target = str(path)
            except OSError as exc:
                log.warning("the codebase index is kept in memory: %s", exc)
        db = sqlite3.connect(target, check_same_thread=False, isolation_level=None)
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError:  # a damaged file: start over
            db.close()
            if path is not None:
                path.unlink(missing_ok=True)
            db = sqlite3.connect(target, check_same_thread=False, isolation_level=None)
            version = 0
        if version != SCHEMA_VERSION:
            db.executescript("""
                DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS chunks; DROP TABLE IF EXISTS symbols;
                DROP TABLE IF EXISTS chunk_vocab;
                DROP TABLE IF EXISTS chunk_text; DROP TABLE IF EXISTS symbol_text;
                CREATE TABLE files (path TEXT PRIMARY KEY, root TEXT, stamp TEXT, hash TEXT, lines INTEGER);
                CREATE VIRTUAL TABLE chunk_text USING fts5(path, name, body, terms, tokenize='porter unicode61');
                CREATE VIRTUAL TABLE chunk_vocab USING fts5vocab(chunk_text, 'row');
                CREATE TABLE chunks (id INTEGER PRIMARY KEY, path TEXT, start INTEGER, end INTEGER, name TEXT);
                CREATE INDEX chunks_path ON chunks(path);
                CREATE TABLE symbols (id INTEGER PRIMARY KEY, name TEXT, lower TEXT, qualified TEXT, kind TEXT,
                                      path TEXT, start INTEGER, end INTEGER);
                CREATE VIRTUAL TABLE symbol_text USING fts5(name, summary, tokenize='porter unicode61');
                CREATE INDEX symbols_name ON symbols(name); CREATE INDEX symbols_lower ON symbols(lower);
                CREATE INDEX symbols_path ON symbols(path);
            """)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        self._db, self._db_roots = db, roots
        return db

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    # -- what is indexed ----------------------------------------------------------------------
    def _allowed(self, path: Path) -> bool:
        return not is_excluded_path(str(path), self.workspace.exclude_globs)

    def _inside(self, root: Path, path: Path) -> bool:
        """A link is followed only to a file inside the same workspace folder that may be read
        (`keys.py -> ~/.ssh/id_rsa` is not)."""
        try:
            real = path.resolve()
        except (OSError, RuntimeError):
            return False
        return root in real.parents and self._allowed(real)

    @staticmethod
    def _skipped_dir(folder: Path, ignore: GitIgnore) -> bool:
        """A folder the index never enters: hidden, an environment or build output, `.gitignore`d,
        or a link (the walk does not follow folder links: `vendor -> ~/private` stays outside)."""
        return (folder.name.startswith(".") or folder.name in SKIPPED_DIRS or os.path.islink(folder)
                or ignore.ignored(folder, is_dir=True))

    def _listed(self, root: Path, path: Path, ignore: GitIgnore) -> bool:
        """A file in a folder the index enters is indexed: a suffix it reads, not `.gitignore`d, not a
        secret or excluded, and a link only to a readable file inside the same workspace folder."""
        return (path.suffix.lower() in INDEXED_SUFFIXES and not ignore.ignored(path) and self._allowed(path)
                and (not os.path.islink(path) or self._inside(root, path)))

    def files(self, stop: threading.Event | None = None) -> list[tuple[Path, Path]]:
        """(workspace folder, file) for every file the index may hold."""
        out: list[tuple[Path, Path]] = []
        for root in self.workspace.roots:
            ignore = GitIgnore()
            for folder, dirs, names in os.walk(root):
                if stop is not None and stop.is_set():
                    return out
                here = Path(folder)
                ignore.load(here)
                dirs[:] = sorted(d for d in dirs if not self._skipped_dir(here / d, ignore))
                out.extend((root, here / name) for name in sorted(names) if self._listed(root, here / name, ignore))
                if len(out) >= MAX_INDEXED_FILES:
                    return out[:MAX_INDEXED_FILES]
        return out

    def would_list(self, root: Path, path: Path) -> bool:
        """Whether `files()` lists `path`: the walk's rules for one file (a save, a watched change),
        every folder from `root` down judged as the walk judges it, with the `.gitignore`s met on the way."""
        try:
            parts = path.relative_to(root).parts
        except ValueError:
            return False
        if not parts or ".." in parts:
            return False
        ignore, folder = GitIgnore(), root
        ignore.load(root)
        for name in parts[:-1]:
            folder = folder / name
            if self._skipped_dir(folder, ignore):
                return False
            ignore.load(folder)
        return self._listed(root, path, ignore)

    def refresh(self, stop: threading.Event | None = None,
                listed: list[tuple[Path, Path]] | None = None) -> dict[str, float]:
        """Bring the index in step with the disk (a worker thread): new and changed files are
        chunked, deleted and newly excluded ones dropped (`listed`: `files()`, when already walked).
        Returns what it cost."""
        with self._refreshing:
            return self._refresh(stop, listed)

    def _refresh(self, stop: threading.Event | None, listed: list[tuple[Path, Path]] | None) -> dict[str, float]:
        started = time.perf_counter()
        listed = self.files(stop) if listed is None else listed
        with self._lock:
            db = self._connect()
            if db is None:
                return {}
            known = {row[0]: row[1] for row in db.execute("SELECT path, stamp FROM files")}
        seen: set[str] = set()
        indexed = lines = 0
        batch = 0
        with self._lock:
            db.execute("BEGIN")
        try:
            for root, path in listed:
                if stop is not None and stop.is_set():
                    break
                key = str(path)
                seen.add(key)
                stamp = self._stamp(path)
                if stamp is None or known.get(key) == stamp:
                    continue
                with self._lock:
                    lines += self._index_file(db, root, path, stamp)
                indexed += 1
                batch += 1
                if batch >= COMMIT_EVERY:
                    with self._lock:
                        db.execute("COMMIT")
                        db.execute("BEGIN")
                    batch = 0
                    time.sleep(0)
            if stop is None or not stop.is_set():
                with self._lock:
                    for gone in set(known) - seen:
                        self._drop(db, gone)
        finally:
            with self._lock:
                db.execute("COMMIT")
        with self._lock:
            total = db.execute("SELECT COUNT(*), COALESCE(SUM(lines), 0) FROM files").fetchone()
        self.last_refresh = {"files": total[0], "lines": total[1], "indexed": indexed, "indexedLines": lines,
                             "seconds": round(time.perf_counter() - started, 3)}
        self.ready.set()
        return self.last_refresh

    @staticmethod
    def _stamp(path: Path) -> str | None:
        try:
            st = path.stat()
        except OSError:
            return None
        if st.st_size > MAX_FILE_BYTES or not path.is_file():
            return None
        return f"{st.st_mtime_ns}:{st.st_size}"

    def _index_file(self, db: sqlite3.Connection, root: Path, path: Path, stamp: str) -> int:
        try:
            data = path.read_bytes()
        except OSError:
            return 0
        key = str(path)
        digest = hashlib.sha256(data).hexdigest()
        row = db.execute("SELECT hash FROM files WHERE path = ?", (key,)).fetchone()
        if row is not None and row[0] == digest:  # touched, not changed
            db.execute("UPDATE files SET stamp = ? WHERE path = ?", (stamp, key))
            return 0
        self._drop(db, key)
        text = data.decode("utf-8", "replace")
        lines = text.count("\n") + 1
        if len(text) / max(lines, 1) > MAX_AVERAGE_LINE or "\0" in text:
            chunks, symbols = [], []
        else:
            chunks, symbols = chunk_file(text, path.suffix.lower())
        rel = path.relative_to(root).as_posix()
        db.execute("INSERT INTO files VALUES (?, ?, ?, ?, ?)", (key, str(root), stamp, digest, lines))
        for chunk in chunks:
            cur = db.execute("INSERT INTO chunks (path, start, end, name) VALUES (?, ?, ?, ?)",
                             (key, chunk.start, chunk.end, chunk.name))
            db.execute("INSERT INTO chunk_text (rowid, path, name, body, terms) VALUES (?, ?, ?, ?, ?)",
                       (cur.lastrowid, rel, " ".join(words(chunk.name)), chunk.text, _terms_of(chunk.text)))
        for s in symbols:
            cur = db.execute("INSERT INTO symbols (name, lower, qualified, kind, path, start, end) VALUES (?, ?, ?, ?, ?, ?, ?)",
                             (s.name, s.name.lower(), s.qualified, s.kind, key, s.start, s.end))
            db.execute("INSERT INTO symbol_text (rowid, name, summary) VALUES (?, ?, ?)",
                       (cur.lastrowid, " ".join(words(s.qualified)), s.summary))
        return lines

    @staticmethod
    def _drop(db: sqlite3.Connection, key: str) -> None:
        ids = [row[0] for row in db.execute("SELECT id FROM chunks WHERE path = ?", (key,))]
        db.executemany("DELETE FROM chunk_text WHERE rowid = ?", [(i,) for i in ids])
        db.execute("DELETE FROM chunks WHERE path = ?", (key,))
        symbol_ids = [row[0] for row in db.execute("SELECT id FROM symbols WHERE path = ?", (key,))]
        db.executemany("DELETE FROM symbol_text WHERE rowid = ?", [(i,) for i in symbol_ids])
        db.execute("DELETE FROM symbols WHERE path = ?", (key,))
        db.execute("DELETE FROM files WHERE path = ?", (key,))

    def file_changed(self, path: Path) -> None:
        """A save or a watched-file event: that file alone is read again (or dropped)."""
        root = self.workspace.root_of(path)
        with self._refreshing, self._lock:
            db = self._connect()
            if db is None or root is None:
                return
            # The same rules as the full scan: a save must not bring in what the walk leaves out
            # (a `.gitignore`d file, one under a folder link or a hidden folder).
            stamp = self._stamp(path) if self.would_list(root, path) else None
            db.execute("BEGIN")
            try:
                if stamp is None:
                    self._drop(db, str(path))
                else:
                    self._index_file(db, root, path, stamp)
            finally:
                db.execute("COMMIT")

    # -- questions ----------------------------------------------------------------------------
    def has_file(self, rel: str) -> Path | None:
        """The indexed file a model's citation names (`src/app.py`, or a unique tail `app.py`), or None."""
        rel = rel.strip()
        while rel.startswith(("./", "/")):
            rel = rel[1:] if rel.startswith("/") else rel[2:]
        if not rel:
            return None
        with self._lock:
            db = self._connect()
            if db is None:
                return None
            for root in self.workspace.roots:
                key = str(root / rel)
                if db.execute("SELECT 1 FROM files WHERE path = ?", (key,)).fetchone():
                    return Path(key) if self._allowed(Path(key)) else None
            rows = db.execute("SELECT path FROM files WHERE path LIKE ? ESCAPE '\\' LIMIT 2",
                              ("%/" + _like(rel),)).fetchall()
        return Path(rows[0][0]) if len(rows) == 1 and self._allowed(Path(rows[0][0])) else None

    def lexical(self, question: str, limit: int = 30, query: str | None = None) -> list[Hit]:
        """Chunks by BM25 (`query`: `_match_query(question)`, when the caller has it already)."""
        query = self._match_query(question) if query is None else query
        if not query:
            return []
        with self._lock:
            db = self._connect()
            if db is None:
                return []
            rows = db.execute(
                "SELECT c.path, f.root, c.start, c.end, c.name, t.body, bm25(chunk_text, 2.0, 4.0, 1.0, 0.5) AS score"
                " FROM chunk_text t JOIN chunks c ON c.id = t.rowid JOIN files f ON f.path = c.path"
                " WHERE chunk_text MATCH ? ORDER BY score LIMIT ?", (query, limit)).fetchall()
        return [self._hit(row, -row[6]) for row in rows]

    def symbols(self, question: str, limit: int = 30, query: str | None = None) -> list[Hit]:
        """Definitions: first those of the names the question spells as code (rarer names first),
        then those whose name and summary (signature, docstring) share its words (BM25): a map of
        the code by what its definitions are called and say they do. `query` as for `lexical`."""
        named = code_names(question)
        plain = [w for w in dict.fromkeys(_WORD.findall(question)) if w.lower() not in STOPWORDS and len(w) > 2
                 and w not in named]
        found: list[tuple[float, tuple]] = []
        with self._lock:
            db = self._connect()
            if db is None:
                return []
            for weight, names, column in ((20.0, named, "name"), (10.0, named, "lower"), (5.0, plain, "lower")):
                for name in names:
                    key = name if column == "name" else name.lower()
                    rows = db.execute(
                        "SELECT s.path, f.root, s.start, s.end FROM symbols s JOIN files f ON f.path = s.path"
                        f" WHERE s.{column} = ? LIMIT 20", (key,)).fetchall()
                    found.extend((weight / len(rows), row) for row in rows)
            query = self._match_query(question) if query is None else query
            if query:
                rows = db.execute(
                    "SELECT s.path, f.root, s.start, s.end, bm25(symbol_text, 2.0, 1.0) AS score FROM symbol_text t"
                    " JOIN symbols s ON s.id = t.rowid JOIN files f ON f.path = s.path"
                    " WHERE symbol_text MATCH ? ORDER BY score LIMIT ?", (query, limit)).fetchall()
                found.extend((1.0 / (1.0 + rank), row[:4]) for rank, row in enumerate(rows))
            found.sort(key=lambda item: -item[0])
            out, seen, taken = [], set(), set()
            for score, (path, root, start, end) in found:
                if (path, start) in seen:
                    continue
                seen.add((path, start))
                chunk = db.execute(
                    "SELECT c.path, ?, c.start, c.end, c.name, t.body FROM chunks c JOIN chunk_text t ON t.rowid = c.id"
                    " WHERE c.path = ? AND c.start <= ? AND c.end >= ? ORDER BY c.start DESC LIMIT 1",
                    (root, path, start, start)).fetchone()
                if chunk is not None and (chunk[0], chunk[2]) not in taken:  # one hit per chunk
                    taken.add((chunk[0], chunk[2]))
                    out.append(self._hit(chunk, score))
                if len(out) >= limit:
                    break
        return out

    def _match_query(self, question: str) -> str:
        """An FTS5 query for any of the question's terms that say where to look: a term in more than
        COMMON_SHARE of the chunks (`self`, `return` in a large workspace) adds little to BM25 and
        costs the most to rank, so at most MAX_TERMS of the rarest are asked."""
        terms = [w for w in dict.fromkeys(words(question)) if w not in STOPWORDS and len(w) > 1][:64]
        if not terms:
            return ""
        with self._lock:
            db = self._connect()
            if db is None:
                return ""
            total = db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0] or 1
            marks = ",".join("?" * len(terms))
            counts = dict(db.execute(f"SELECT term, doc FROM chunk_vocab WHERE term IN ({marks})", terms).fetchall())
        # The vocabulary holds Porter stems: a term not found as written is kept (FTS5 asks for its stem).
        known = sorted((counts.get(t, 0), t) for t in terms)
        useful = [t for n, t in known if n <= max(COMMON_CHUNKS, COMMON_SHARE * total)] or [t for _, t in known[:2]]
        return " OR ".join('"' + t.replace('"', "") + '"' for t in useful[:MAX_TERMS])

    def search(self, question: str, limit: int = 10, near: frozenset[str] = frozenset()) -> list[Hit]:
        """Both rankings fused by reciprocal rank: a chunk both find rises above either alone. `near`:
        the files the user works in (open, edited, mentioned): their lexical hits count once more."""
        fused: dict[tuple[str, int], tuple[float, Hit]] = {}
        query = self._match_query(question)  # one vocabulary lookup for both rankings
        lexical = self.lexical(question, query=query)
        rankings = [self.symbols(question, query=query), lexical]
        if near:
            rankings.append([hit for hit in lexical if str(hit.file) in near])
        for ranking in rankings:
            seen: set[tuple[str, int]] = set()
            for rank, hit in enumerate(ranking):
                key = (hit.path, hit.start)
                if key in seen:
                    continue
                seen.add(key)
                score = fused.get(key, (0.0, hit))[0] + 1.0 / (RRF_K + rank + 1)
                fused[key] = (score, hit)
        ordered = sorted(fused.values(), key=lambda item: -item[0])
        # Checked again here: files excluded since the last refresh are never handed out.
        allowed = [(score, hit) for score, hit in ordered if self._allowed(hit.file)]
        return [Hit(**{**hit.__dict__, "score": score}) for score, hit in allowed[:limit]]

    def find_symbols(self, query: str, limit: int = 100) -> list[tuple[str, str, str, Path, int, int]]:
        """Definitions whose name starts with, then contains, `query` (case-insensitive), shorter
        names first: (name, qualified, kind, file, start line, end line), for `workspace/symbol`."""
        needle = _like(query.strip().lower())
        with self._lock:
            db = self._connect()
            if db is None:
                return []
            rows = db.execute(
                "SELECT name, qualified, kind, path, start, end FROM symbols WHERE lower LIKE ? ESCAPE '\\'"
                " ORDER BY (lower LIKE ? ESCAPE '\\') DESC, length(name), qualified LIMIT ?",
                ("%" + needle + "%", needle + "%", limit * 2)).fetchall()
        out = [(n, q, k, Path(p), a, b) for n, q, k, p, a, b in rows if self._allowed(Path(p))]
        return out[:limit]

    @staticmethod
    def _hit(row: tuple, score: float) -> Hit:
        key, root, start, end, name, body = row[:6]
        rel = Path(key).relative_to(root).as_posix() if key.startswith(root) else Path(key).name
        return Hit(rel, root, start, end, name or "", body, score)
