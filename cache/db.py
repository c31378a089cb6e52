"""The cache database (cache/qa.db): its schema as named migrations, like the knowledge bank's;
and what every SQLite database of the app shares: connections, migrations, write transactions.

One writer lock per database file and process: every transaction that writes takes it (a single
INSERT or UPDATE too), so threads sharing one connection never interleave their transactions —
without it one thread's BEGIN meets another's open transaction, a statement lands in (and is
committed or rolled back by) another thread's transaction, and `lastrowid` can be another
thread's row. Other processes are kept apart by SQLite's own lock and the busy timeout.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from sqlite_utils import Database

BUSY_TIMEOUT = 30.0  # seconds a writer waits for another process's write lock
T = TypeVar("T")

_INITIAL = """
CREATE TABLE IF NOT EXISTS blobs (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,            -- 'kv' (KV tree nodes), 'doc_kv' (reranker)
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    hits INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL,
    last_used REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS blobs_lfu ON blobs(kind, hits, last_used);
CREATE TABLE IF NOT EXISTS kv_nodes (
    id INTEGER PRIMARY KEY,
    model TEXT NOT NULL,
    parent_id INTEGER REFERENCES kv_nodes(id) ON DELETE CASCADE,
    segment_hash TEXT NOT NULL,    -- hash of the segment's token ids
    depth INTEGER NOT NULL,
    n_tokens INTEGER NOT NULL,     -- tokens in the whole prefix up to and including this node
    blob_key TEXT,                 -- NULL: the node is known but its KV is not stored (evicted)
    hits INTEGER NOT NULL DEFAULT 0,
    last_used REAL NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS kv_nodes_child
    ON kv_nodes(model, coalesce(parent_id, 0), segment_hash);
CREATE TABLE IF NOT EXISTS qa_entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,   -- ids never reused: (count, max id) names the set
    question TEXT NOT NULL,
    embedding BLOB NOT NULL,       -- float32, normalised
    answer TEXT,                   -- NULL while pending
    sources TEXT NOT NULL DEFAULT '[]',
    knowledge_version INTEGER NOT NULL DEFAULT 0,
    stale INTEGER NOT NULL DEFAULT 0,
    origin TEXT NOT NULL DEFAULT 'user',
    hits INTEGER NOT NULL DEFAULT 0,
    size INTEGER NOT NULL,
    created REAL NOT NULL,
    answered_at REAL,
    last_used REAL NOT NULL
);
"""

_PRECOMPUTE = """
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,            -- abstract | predict | populate | decode | rebuild_kv | refresh
    key TEXT NOT NULL UNIQUE,      -- names the work: queued once, never redone once done
    payload TEXT NOT NULL DEFAULT '{}',
    priority INTEGER NOT NULL DEFAULT 50,   -- lower runs first
    state TEXT NOT NULL DEFAULT 'queued',   -- queued | running | done | failed
    attempts INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    created REAL NOT NULL,
    started REAL,
    finished REAL,
    cpu_s REAL
);
CREATE INDEX IF NOT EXISTS jobs_next ON jobs(state, priority, id);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    started REAL NOT NULL,
    finished REAL,
    jobs INTEGER NOT NULL DEFAULT 0,
    cpu_s REAL NOT NULL DEFAULT 0,
    stopped TEXT                   -- finished | deadline | cancelled | preempted | killed (NULL)
);
CREATE TABLE IF NOT EXISTS abstract_items (
    id INTEGER PRIMARY KEY,
    chunk_id INTEGER NOT NULL,
    kind TEXT NOT NULL,            -- person | topic | date | event
    text TEXT NOT NULL,
    created REAL NOT NULL,
    UNIQUE (kind, text)
);
CREATE TABLE IF NOT EXISTS history (
    id INTEGER PRIMARY KEY,
    question TEXT NOT NULL,
    asked REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS cache_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- the largest chunk id the answer could have seen: a newer chunk in its top-k makes it stale
ALTER TABLE qa_entries ADD COLUMN chunk_watermark INTEGER NOT NULL DEFAULT 0;
"""

_KV_PARENT = """
-- the KV tree's eviction order asks, per blob, whether its node has a child with KV
CREATE INDEX IF NOT EXISTS kv_nodes_parent ON kv_nodes(parent_id) WHERE blob_key IS NOT NULL;
"""

_KV_BLOB_KEY = """
-- eviction finds the node of each KV blob (and forgets an evicted one) by its key: without this
-- index each lookup scanned kv_nodes, so ordering the tree's n blobs cost n x n row visits
CREATE INDEX IF NOT EXISTS kv_nodes_blob ON kv_nodes(blob_key) WHERE blob_key IS NOT NULL;
"""

# the evidence segment's sentence vectors per chunk text and encoder (cache/sentences.py)
_SENTENCE_VECTORS = """
CREATE TABLE IF NOT EXISTS sentence_vectors (
    model TEXT NOT NULL,
    key TEXT NOT NULL,             -- hash of the chunk's text
    n INTEGER NOT NULL,
    dim INTEGER NOT NULL,
    vectors BLOB NOT NULL,         -- float16, n × dim, one row per sentence
    last_used REAL NOT NULL,
    PRIMARY KEY (model, key)
);
CREATE INDEX IF NOT EXISTS sentence_vectors_lru ON sentence_vectors(last_used);
"""

_QA_ENCODER = """
-- the encoder whose vector `embedding` is: a lookup compares only vectors of the current one; an
-- entry of another ('' for those stored before this column) is re-embedded from its question
ALTER TABLE qa_entries ADD COLUMN encoder TEXT NOT NULL DEFAULT '';
"""

_HISTORY_CHUNKS = """
-- the chunks each asked question's prompt was made from (JSON list of chunk ids, prompt order):
-- precompute ranks chunks for their KV nodes by how often questions retrieve them
ALTER TABLE history ADD COLUMN chunks TEXT NOT NULL DEFAULT '[]';
"""

_QA_REFUSED = """
-- the similarity at which the user last said "not what I asked" of this entry's answer: it is
-- served only to questions more similar than that (a per-entry threshold learned from refusals)
ALTER TABLE qa_entries ADD COLUMN refused_at REAL NOT NULL DEFAULT 0;
"""

_QA_EVIDENCE = """
-- the lines an answer quoted (JSON [[chunk id, line], …]): a stored answer is served for a new
-- question only when that question's own line scoring quotes the same line (answer/qa_verify.py);
-- an entry without them (stored before this column) keeps the question guard
ALTER TABLE qa_entries ADD COLUMN evidence TEXT NOT NULL DEFAULT '[]';
-- the hits served, for the night's self-check: a sample is answered afresh and compared, and an
-- entry that served a wrong answer is served only to questions more similar than that one
CREATE TABLE IF NOT EXISTS qa_served (
    id INTEGER PRIMARY KEY,
    entry_id INTEGER NOT NULL REFERENCES qa_entries(id) ON DELETE CASCADE,
    question TEXT NOT NULL,
    similarity REAL NOT NULL,
    served REAL NOT NULL,
    checked REAL                   -- NULL until the self-check answered it afresh
);
CREATE INDEX IF NOT EXISTS qa_served_unchecked ON qa_served(checked, served);
"""

# what each precompute run did, by job kind (JSON {kind: count}): `night status` and `stats`
_RUN_KINDS = """
ALTER TABLE runs ADD COLUMN kinds TEXT;
"""

# what each asked question was saved by (issue 33: a night balances KV nodes against answered
# predictions by what each saved): the prompt tokens restored from the KV tree, the prompt's
# tokens, and the origin of the QA-bank entry that served it ('' when the model answered)
_HISTORY_SAVED = """
ALTER TABLE history ADD COLUMN kv_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE history ADD COLUMN prompt_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE history ADD COLUMN served TEXT NOT NULL DEFAULT '';
"""

_VERDICTS = """
CREATE TABLE IF NOT EXISTS verdicts (key TEXT PRIMARY KEY, margin REAL NOT NULL);
"""

_QA_JUDGED = """
-- the reader confirmed the entry's quote, when its answer was kept or when a reader first served
-- it: an answer kept with no reader (none set, not loaded, memory short) or by the night is
-- judged when first served. Entries from before this column are unjudged: no one knows
ALTER TABLE qa_entries ADD COLUMN judged INTEGER NOT NULL DEFAULT 0;
"""

MIGRATIONS: list[tuple[str, str]] = [
    ("0001_initial", _INITIAL),
    ("0002_precompute", _PRECOMPUTE),
    ("0003_kv_parent", _KV_PARENT),
    ("0004_kv_blob_key", _KV_BLOB_KEY),
    ("0005_qa_encoder", _QA_ENCODER),
    ("0006_sentence_vectors", _SENTENCE_VECTORS),
    ("0007_history_chunks", _HISTORY_CHUNKS),
    ("0008_qa_refused", _QA_REFUSED),
    ("0009_qa_evidence", _QA_EVIDENCE),
    ("0010_run_kinds", _RUN_KINDS),
    ("0011_history_saved", _HISTORY_SAVED),
    ("0012_verdicts", _VERDICTS),
    ("0013_qa_judged", _QA_JUDGED),
]


def enable_wal(conn: sqlite3.Connection, tries: int = 100) -> None:
    """Switch to WAL. Two connections opening a new file at once race here, and the loser gets
    "database is locked" at once (the busy timeout does not cover a journal-mode change): retry
    until one of them has switched it; the mode is stored in the file."""
    for attempt in range(tries):
        try:
            if conn.execute("PRAGMA journal_mode = WAL").fetchone()[0].lower() == "wal":
                break
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == tries - 1:
                raise
        time.sleep(0.05)
    conn.execute("PRAGMA synchronous = NORMAL")


_FILE_LOCKS: dict[str, threading.RLock] = {}  # by the database file's resolved path
_DB_LOCKS: weakref.WeakKeyDictionary[Database, threading.RLock] = weakref.WeakKeyDictionary()
_REGISTRY = threading.Lock()


def writer_lock(db: Database) -> threading.RLock:
    """The writer lock of `db`'s file in this process: every Database on one file gets the same
    re-entrant lock (an in-memory database has one of its own)."""
    with _REGISTRY:
        lock = _DB_LOCKS.get(db)
        if lock is None:
            path = file_of(db.conn)
            lock = _FILE_LOCKS.setdefault(path, threading.RLock()) if path else threading.RLock()
            _DB_LOCKS[db] = lock
        return lock


def file_of(conn: sqlite3.Connection) -> str:
    """The resolved path of the connection's main database ('' in memory)."""
    for _, name, file in conn.execute("PRAGMA database_list").fetchall():
        if name == "main":
            return str(Path(file).resolve()) if file else ""
    return ""


@contextmanager
def transaction(db: Database) -> Iterator[None]:
    """One write transaction on `db`, under its file's writer lock: all of it is stored or none.
    Nested on one thread, a savepoint. BEGIN IMMEDIATE takes SQLite's write lock up front: a
    deferred transaction that reads, then writes, fails at once with "database is locked" when
    another process wrote in between, where this one waits for the busy timeout."""
    with writer_lock(db):
        conn = db.conn
        if conn.in_transaction:  # this thread's own: the lock is held by no other
            with db.atomic():
                yield
            return
        _when_free(lambda: conn.execute("BEGIN IMMEDIATE"))
        try:
            yield
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        try:
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise


def write(db: Database, sql: str, params: list | None = None) -> sqlite3.Cursor:
    """One statement that writes, under the file's writer lock: a transaction of its own (the
    connection autocommits), or part of the one this thread has open."""
    with writer_lock(db):
        return _when_free(lambda: db.execute(sql, params))


def _when_free(start: Callable[[], T]) -> T:
    """`start()`, again while SQLite answers "database is locked" at once, up to the busy
    timeout. It answers so without waiting when this connection still holds a read snapshot —
    another thread's SELECT on the shared connection, not yet reset — and another process
    holds the write lock (waiting could deadlock, so SQLite skips the busy handler); the read
    ends within moments. `start` is a BEGIN or a single statement: a failed one changed
    nothing."""
    deadline = time.monotonic() + BUSY_TIMEOUT
    pause = 0.001
    while True:
        try:
            return start()
        except sqlite3.DatabaseError as exc:
            if not _busy(exc) or time.monotonic() > deadline:
                raise
        time.sleep(pause)
        pause = min(2 * pause, 0.05)


# What a failed statement reports when another thread's statement on the shared connection
# stepped between its failure and the reading of its error: that statement's result code
# ("another row available": SQLITE_ROW; "no more rows available": SQLITE_DONE; "not an error":
# SQLITE_OK), not this one's "database is locked" (tests/robustness/test_two_writers.py met
# the first two, about one run in four).
_CLOBBERED = ("another row available", "no more rows available", "not an error")


def _busy(exc: sqlite3.DatabaseError) -> bool:
    """The statement met another writer ("database is locked"), or its error was overwritten
    by another thread's step (it failed, so it changed nothing either way)."""
    text = str(exc)
    return "locked" in text or text in _CLOBBERED


def connect(path: Path | None) -> sqlite3.Connection:
    """A connection in autocommit mode (every write is spelled out in `transaction`), usable
    from worker threads; a file gets WAL and a 30 s busy timeout."""
    if path is None:
        return sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    conn = sqlite3.connect(
        path, timeout=BUSY_TIMEOUT, check_same_thread=False, isolation_level=None
    )
    enable_wal(conn)
    return conn


def apply_migrations(db: Database, migrations: list[tuple[str, str]]) -> list[str]:
    """Apply the named migrations not yet recorded in `_migrations`; return their names.
    Each runs in one transaction that re-checks the record first, so two processes (or two
    connections of one) opening a database at once apply it once (an ALTER TABLE cannot say IF
    NOT EXISTS). A database with every one recorded is only read: opening it takes no write
    lock, so a search opens a home while another process (the night's import) writes it."""
    if _all_applied(db, migrations):
        return []
    with transaction(db):
        db.execute(
            "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT)"
        )
    applied = []
    for name, sql in migrations:
        if _applied(db, name):
            continue
        with transaction(db):
            if not _applied(db, name):
                for statement in _statements(sql):
                    db.conn.execute(statement)
                stamp = datetime.now(UTC).isoformat()
                db.conn.execute("INSERT INTO _migrations VALUES (?, ?)", [name, stamp])
                applied.append(name)
    return applied


def _all_applied(db: Database, migrations: list[tuple[str, str]]) -> bool:
    """Every migration is recorded: read without taking the write lock."""
    try:
        done = {r[0] for r in db.execute("SELECT name FROM _migrations").fetchall()}
    except sqlite3.OperationalError:  # no such table: a new database
        return False
    return all(name in done for name, _ in migrations)


def _applied(db: Database, name: str) -> bool:
    return db.execute("SELECT 1 FROM _migrations WHERE name = ?", [name]).fetchone() is not None


def _statements(script: str) -> list[str]:
    """Split a script into complete statements (sqlite3 decides where one ends)."""
    out, current = [], ""
    for line in script.splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):
            out.append(current.strip())
            current = ""
    if current.strip() and not current.strip().startswith("--"):
        out.append(current.strip())
    return out


def open_cache_db(path: Path | None) -> Database:
    """The cache database at `path` (created 0600), or in memory for `None`."""
    if path is not None and not path.exists():
        path.touch(mode=0o600)
    db = Database(connect(path))
    db.execute("PRAGMA foreign_keys = ON")
    apply_migrations(db, MIGRATIONS)
    return db
