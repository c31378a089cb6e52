"""Open the knowledge database (WAL, foreign keys, 0600) and apply named migrations in order."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from sqlite_utils import Database

from assistant.home import touch_private
from cache.db import BUSY_TIMEOUT, apply_migrations, connect


class DatabaseError(RuntimeError):
    """The knowledge database cannot be opened; the message names the file and what to do."""


_INITIAL = """
        CREATE TABLE IF NOT EXISTS documents (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('email', 'note')),
            source_key TEXT NOT NULL UNIQUE,
            message_id TEXT, thread_id TEXT,
            sender TEXT, recipients TEXT, cc TEXT,
            date TEXT, title TEXT, folder TEXT,
            source_path TEXT, source_offset INTEGER,
            attachments TEXT,          -- JSON list of {name, content_type, size}
            mtime REAL,
            content_hash TEXT NOT NULL,
            body TEXT, quoted TEXT,
            replaced_chars INTEGER DEFAULT 0,
            imported_at TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS documents_thread ON documents(thread_id);
        CREATE INDEX IF NOT EXISTS documents_source_path ON documents(source_path);
        CREATE TABLE IF NOT EXISTS chunks (
            id INTEGER PRIMARY KEY,
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            ordinal INTEGER NOT NULL,
            text TEXT NOT NULL,
            token_count INTEGER NOT NULL,
            content_hash TEXT NOT NULL,
            UNIQUE (document_id, ordinal)
        );
        CREATE INDEX IF NOT EXISTS chunks_hash ON chunks(content_hash);
        CREATE TABLE IF NOT EXISTS embeddings (
            chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL       -- float32, L2-normalised
        );
        CREATE TABLE IF NOT EXISTS import_issues (
            id INTEGER PRIMARY KEY,
            run_started TEXT NOT NULL,
            path TEXT, location TEXT, reason TEXT, severity TEXT
        );
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
        -- bumped on every change of documents/chunks, and of embeddings: index files carry them
        INSERT OR IGNORE INTO meta VALUES ('chunks_version', '0'), ('vectors_version', '0');
        -- names this database in index file names, so a replaced database never meets old indexes
        INSERT OR IGNORE INTO meta VALUES ('db_id', lower(hex(randomblob(8))));
"""

# BM25 for large homes (assistant/knowledge/fts.py): an external-content FTS5 index of chunks.text,
# kept in step with every import and delete by triggers (a cascaded delete fires them too); an
# existing home's chunks are indexed once, when the migration runs.
_CHUNKS_FTS = """
        CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts
            USING fts5(text, content='chunks', content_rowid='id');
        CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts_terms USING fts5vocab(chunks_fts, row);
        CREATE TRIGGER IF NOT EXISTS chunks_fts_insert AFTER INSERT ON chunks BEGIN
            INSERT INTO chunks_fts(rowid, text) VALUES (new.id, new.text);
        END;
        CREATE TRIGGER IF NOT EXISTS chunks_fts_delete AFTER DELETE ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', old.id, old.text);
        END;
        CREATE TRIGGER IF NOT EXISTS chunks_fts_update AFTER UPDATE OF text ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', old.id, old.text);
            INSERT INTO chunks_fts(rowid, text) VALUES (new.id, new.text);
        END;
        INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild');
"""

# Threads (assistant/mail/threads.py): the reply headers kept per mail, filled at import; how each
# mail's thread_id was found; the Message-ID index the thread links are resolved by. An existing
# home keeps as a reference what its thread_id held (the first References id, else In-Reply-To),
# and meta threads_version (the chunks_version its threads were computed at; since 0012, the
# rules they were computed by) says they are due.
_THREAD_HEADERS = """
        ALTER TABLE documents ADD COLUMN in_reply_to TEXT;
        ALTER TABLE documents ADD COLUMN refs TEXT;      -- the References ids, space-separated
        ALTER TABLE documents ADD COLUMN thread_by TEXT; -- 'headers' | 'subject' | NULL: alone
        UPDATE documents SET refs = thread_id
            WHERE kind = 'email' AND thread_id != '' AND thread_id != coalesce(message_id, '');
        CREATE INDEX IF NOT EXISTS documents_message_id ON documents(message_id);
        INSERT OR IGNORE INTO meta VALUES ('threads_version', '-1');
"""

# Mail query terms (assistant/mail/filters.py): people's names beside their addresses, filled
# at import (a re-import fills them for mail stored before), and indexes for the filters that
# narrow candidates in SQL: sender, date, and the content hash that finds copies of one mail.
_MAIL_TERMS = """
        ALTER TABLE documents ADD COLUMN sender_name TEXT;
        ALTER TABLE documents ADD COLUMN recipient_names TEXT;
        ALTER TABLE documents ADD COLUMN cc_names TEXT;
        CREATE INDEX IF NOT EXISTS documents_sender ON documents(sender);
        CREATE INDEX IF NOT EXISTS documents_date ON documents(date);
        CREATE INDEX IF NOT EXISTS documents_content ON documents(content_hash);
"""

# Imported sources remembered (assistant/knowledge/sources.py): an unchanged mbox is skipped by
# size and mtime, one grown by appending is read from where the last import ended.
_SOURCES = """
        CREATE TABLE IF NOT EXISTS sources (
            path TEXT NOT NULL,
            kind TEXT NOT NULL,        -- mbox | maildir | eml | notes, or path: one the user gave
            size INTEGER NOT NULL,
            mtime REAL NOT NULL,
            tail TEXT NOT NULL,        -- hash of the last bytes read: an append keeps them
            imported REAL NOT NULL,
            PRIMARY KEY (path, kind)
        );
"""

# One row per attachment of a mail (has:attachment, attachment names), kept with its document by
# ON DELETE CASCADE; an existing home's attachments are copied from documents.attachments (JSON).
_ATTACHMENTS = """
        CREATE TABLE IF NOT EXISTS attachments (
            id INTEGER PRIMARY KEY,
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            name TEXT NOT NULL, content_type TEXT, size INTEGER
        );
        CREATE INDEX IF NOT EXISTS attachments_document ON attachments(document_id);
        INSERT INTO attachments (document_id, name, content_type, size)
            SELECT d.id, json_extract(a.value, '$.name'), json_extract(a.value, '$.content_type'),
                   json_extract(a.value, '$.size')
            FROM documents d, json_each(coalesce(d.attachments, '[]')) a;
"""

# How a mail's headers say it went to many (ingest/emails.py bulk_mark: 'list' | 'bulk' | 'auto'
# | ''), read by the night's coverage plan; NULL for mail stored before, filled by a re-import.
_BULK = "ALTER TABLE documents ADD COLUMN bulk TEXT;"

# The highest chunk id ever given (store.py `_insert`): SQLite gives a new row max(id) + 1, so
# the ids of the newest mail's chunks came back after it was removed (a note edited, mail gone
# from its mbox), and the QA bank, which finds mail newer than an answer by id, missed them.
_CHUNK_ID_HIGH = """
        INSERT OR IGNORE INTO meta VALUES
            ('chunk_id_high', (SELECT coalesce(max(id), 0) FROM chunks));
"""

# The highest document id ever given (store.py `_insert`), as chunk_id_high: a mail's number
# (`#12` in search, `show 12`, the TUI's sources) never comes back as another mail's after the
# newest mail was removed (a note edited, mail gone from its folder).
_DOC_ID_HIGH = """
        INSERT OR IGNORE INTO meta VALUES
            ('doc_id_high', (SELECT coalesce(max(id), 0) FROM documents));
"""

# Whether every chunk has a vector of the encoder in use is asked by every search and question:
# with each chunk at most one vector and no vector without its chunk (the foreign key, and the
# orphans a home written without it may hold removed here), it is a count of the encoder's
# vectors against the chunks', which this index answers without reading the vectors' pages
# (0.28 s → 0.01 s on a 300k-chunk home, knowledge/vector_rows.py).
_EMBEDDINGS_MODEL = """
        DELETE FROM embeddings WHERE chunk_id NOT IN (SELECT id FROM chunks);
        CREATE INDEX IF NOT EXISTS embeddings_model ON embeddings(model);
"""

# Thread ids that name a thread merged into another (assistant/mail/thread_ids.py): an id a
# user was shown still finds its thread once a mail joined it to another.
_THREAD_ALIASES = """
        CREATE TABLE IF NOT EXISTS thread_aliases (
            alias TEXT PRIMARY KEY,    -- the id of a thread merged into another
            thread_id TEXT NOT NULL    -- the id of the thread it is part of now
        );
        CREATE INDEX IF NOT EXISTS thread_aliases_thread ON thread_aliases(thread_id);
"""

# Threads computed again only where mail changed (assistant/mail/thread_update.py). Triggers
# note every mail added, removed or changed in what threads are found from, with what a removed
# or changed mail was; what finds the threads a change touches is kept beside: each mail's
# normalized subject, the thread of the mails naming each In-Reply-To/References id, and how
# many mails each address is on (the owner's addresses are left out of the subject pass). From
# here meta threads_version holds the rules the threads were computed by (threads.RULES; '-1':
# compute every thread), which the first computation after this does, filling these.
_THREAD_CHANGES = """
        CREATE TABLE IF NOT EXISTS thread_changes (
            id INTEGER PRIMARY KEY,
            change TEXT NOT NULL,      -- added | removed | changed
            doc_id INTEGER NOT NULL,
            thread_id TEXT,            -- removed, changed: the thread it was in, and what it was:
            title TEXT, sender TEXT, recipients TEXT, cc TEXT
        );
        CREATE TRIGGER IF NOT EXISTS thread_mail_added AFTER INSERT ON documents
        WHEN new.kind = 'email' BEGIN
            INSERT INTO thread_changes (change, doc_id) VALUES ('added', new.id);
        END;
        CREATE TRIGGER IF NOT EXISTS thread_mail_removed AFTER DELETE ON documents
        WHEN old.kind = 'email' BEGIN
            INSERT INTO thread_changes (change, doc_id, thread_id, title, sender, recipients, cc)
            VALUES ('removed', old.id, old.thread_id, old.title, old.sender, old.recipients,
                    old.cc);
        END;
        CREATE TRIGGER IF NOT EXISTS thread_mail_changed
        AFTER UPDATE OF message_id, in_reply_to, refs, title, sender, recipients, cc, date
        ON documents WHEN new.kind = 'email' BEGIN
            INSERT INTO thread_changes (change, doc_id, thread_id, title, sender, recipients, cc)
            VALUES ('changed', new.id, old.thread_id, old.title, old.sender, old.recipients,
                    old.cc);
        END;
        ALTER TABLE documents ADD COLUMN subject_key TEXT;  -- threads.normalize_subject's
        CREATE INDEX IF NOT EXISTS documents_subject_key ON documents(subject_key);
        CREATE TABLE IF NOT EXISTS thread_refs (
            ref TEXT PRIMARY KEY,      -- an In-Reply-To or References id
            thread_id TEXT NOT NULL    -- the thread of the mails that name it
        );
        CREATE TABLE IF NOT EXISTS thread_people (
            address TEXT PRIMARY KEY,  -- threads.addresses' (an address, else a name)
            mails INTEGER NOT NULL     -- the mails it is on (From, To or Cc)
        );
        UPDATE meta SET value = '-1' WHERE key = 'threads_version';
"""

# Named migrations, applied in order, each in one transaction with its record in _migrations.
MIGRATIONS: list[tuple[str, str]] = [
    ("0001_initial", _INITIAL),
    ("0002_chunks_fts", _CHUNKS_FTS),
    ("0003_thread_headers", _THREAD_HEADERS),
    ("0004_mail_terms", _MAIL_TERMS),
    ("0005_sources", _SOURCES),
    # `folder:` queries and the per-folder counts of `stats` read documents by folder
    ("0006_documents_folder", "CREATE INDEX IF NOT EXISTS documents_folder ON documents(folder);"),
    ("0007_attachments", _ATTACHMENTS),
    ("0008_bulk_mark", _BULK),
    ("0009_chunk_id_high", _CHUNK_ID_HIGH),
    # where an mbox's last message starts: an append is read from there (knowledge/sources.py)
    ("0010_sources_resume", "ALTER TABLE sources ADD COLUMN resume INTEGER;"),
    ("0011_thread_aliases", _THREAD_ALIASES),
    ("0012_thread_changes", _THREAD_CHANGES),
    ("0013_doc_id_high", _DOC_ID_HIGH),
    ("0014_embeddings_model", _EMBEDDINGS_MODEL),
]


def open_db(path: Path | None) -> Database:
    """A file database at `path`, or an in-memory one for `None` (tests)."""
    db = Database(connect(None)) if path is None else _open_file(path)
    db.execute("PRAGMA foreign_keys = ON")
    db.conn.create_function("words_in_order", 2, words_in_order, deterministic=True)
    try:
        migrate(db)
    except sqlite3.OperationalError as exc:
        if "locked" not in str(exc):
            raise
        raise DatabaseError(
            f"{path}: another process (an import, the night's run) has been writing it for "
            f"over {BUSY_TIMEOUT:.0f} s, and this version must update its tables first; try "
            "again once it is done. Nothing was changed."
        ) from exc
    return db


def _open_file(path: Path) -> Database:
    if not path.exists():
        touch_private(path)
    try:
        db = Database(connect(path))
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        raise DatabaseError(
            f"{path}: not a usable SQLite database ({exc}). Move it aside and re-import your mail; "
            "nothing else in the home folder is touched."
        ) from exc
    return db


def migrate(db: Database) -> list[str]:
    """Apply the knowledge bank's migrations not yet applied; return their names."""
    return apply_migrations(db, MIGRATIONS)


def words_in_order(words: str, text: str | None) -> bool:
    """Whether `text` holds the space-separated `words` as whole words, in that order, with
    nothing but spaces or punctuation between them, in any case: the query terms' whole-word
    match of a subject (assistant/mail/filters.py subject_words), as SQL function."""
    return bool(text) and _words_pattern(words).search(text) is not None


@lru_cache(maxsize=64)
def _words_pattern(words: str) -> re.Pattern[str]:
    inner = r"[\W_]+".join(re.escape(w) for w in words.split())
    return re.compile(rf"(?<![^\W_]){inner}(?![^\W_])", re.IGNORECASE)


IN_BATCH = 500  # values in one statement (SQLite bounds its parameters)


def rows_in(db: Database, sql: str, values: Sequence, before: Sequence = ()) -> list[tuple]:
    """The rows of `sql`, whose `{}` is an IN list's place, over `values` IN_BATCH at a time,
    after the parameters `before` ("... WHERE model = ? AND chunk_id IN ({})")."""
    rows: list[tuple] = []
    for start in range(0, len(values), IN_BATCH):
        part = list(values[start : start + IN_BATCH])
        rows += db.execute(sql.format(",".join("?" * len(part))), [*before, *part]).fetchall()
    return rows


def at_or_under(column: str, path: str) -> tuple[str, list[str]]:
    """SQL for `column` holding `path` or a path under it: a range on the column's index
    (`path/` up to `path0`, "0" being the character after "/"), where LIKE would read them all."""
    return f"({column} = ? OR ({column} >= ? AND {column} < ?))", [path, path + "/", path + "0"]
