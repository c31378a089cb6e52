"""The cache database (cache/qa.db): its schema as named migrations, like the knowledge bank's."""

from __future__ import annotations

import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path

from sqlite_utils import Database

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

MIGRATIONS: list[tuple[str, str]] = [("0001_initial", _INITIAL)]


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


def connect(path: Path | None) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are spelled out: BEGIN IMMEDIATE or
    Database.atomic()), usable from worker threads; a file gets WAL and a 30 s busy timeout."""
    if path is None:
        return sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    conn = sqlite3.connect(path, timeout=30, check_same_thread=False, isolation_level=None)
    enable_wal(conn)
    return conn


def apply_migrations(db: Database, migrations: list[tuple[str, str]]) -> list[str]:
    """Apply the named migrations not yet recorded in `_migrations`; return their names."""
    db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
    done = {row[0] for row in db.execute("SELECT name FROM _migrations").fetchall()}
    applied = []
    for name, sql in migrations:
        if name in done:
            continue
        stamp = datetime.now(UTC).isoformat()
        # executescript commits first, so the transaction is spelled out in the script itself;
        # IMMEDIATE and IF NOT EXISTS make two processes opening a new database at once safe.
        db.conn.executescript(
            f"BEGIN IMMEDIATE;\n{sql}\n"
            f"INSERT OR IGNORE INTO _migrations VALUES ('{name}', '{stamp}');\nCOMMIT;"
        )
        applied.append(name)
    return applied


def open_cache_db(path: Path | None) -> Database:
    """The cache database at `path` (created 0600), or in memory for `None`."""
    if path is not None and not path.exists():
        path.touch(mode=0o600)
    db = Database(connect(path))
    db.execute("PRAGMA foreign_keys = ON")
    apply_migrations(db, MIGRATIONS)
    return db
