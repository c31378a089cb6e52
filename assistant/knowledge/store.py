"""The knowledge bank's reads and writes; re-importing the same source adds nothing."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import numpy as np
from sqlite_utils import Database

from assistant.ingest.chunking import Chunk
from assistant.ingest.types import Document, Issue
from assistant.knowledge.mailbox import Mailbox
from assistant.knowledge.source_rows import SourceRows, is_under
from assistant.knowledge.thread_index import ThreadIndex
from assistant.knowledge.thread_rows import ThreadRows
from assistant.knowledge.vector_rows import VectorRows
from cache.db import transaction

Outcome = Literal["added", "updated", "unchanged", "duplicate"]


@dataclass(frozen=True)
class ChunkRecord:
    """A chunk with the metadata of its source, as search results and prompts need it."""

    chunk_id: int
    text: str
    kind: str
    title: str
    sender: str
    date: str
    message_id: str
    note_path: str
    folder: str
    ordinal: int
    token_count: int
    content_hash: str
    thread_id: str = ""

    @property
    def passage(self) -> str:
        """The chunk's text without its first line, which repeats its title (ingest/chunking)."""
        return self.text.split("\n", 1)[-1].strip()

    def ref(self) -> dict:
        """Where the chunk comes from, as answers and `search --json` report it."""
        return {
            "chunk_id": self.chunk_id,
            "kind": self.kind,
            "message_id": self.message_id or None,
            "note_path": self.note_path or None,
            "title": self.title,
            "sender": self.sender or None,
            "date": self.date or None,
            "thread": self.thread_id or None,
        }


class KnowledgeStore(ThreadRows, ThreadIndex, VectorRows, SourceRows):
    def __init__(self, db: Database) -> None:
        self.db = db
        self.mail = Mailbox(db)  # reads of mail as mail: senders, filtered chunks, copies
        self._all_embedded: dict[str, tuple[tuple[int, int], bool]] = {}

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction (a savepoint when nested), under the database file's writer
        lock (cache/db.py): all of it is stored, or none of it."""
        with transaction(self.db):
            yield

    def version(self, what: Literal["chunks", "vectors"] = "chunks") -> int:
        """A counter that changes whenever the chunks (or the vectors) change."""
        key = f"{what}_version"
        return int(self.db.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()[0])

    def max_chunk_id(self) -> int:
        """The highest chunk id ever given: chunks added later have larger ids (an id is never
        given twice, `_insert`)."""
        return self._highest_id("chunks", "chunk_id_high")

    def _highest_id(self, table: str, high: str) -> int:
        """The highest id of `table` ever given: its rows' and meta `high`'s (removed rows')."""
        (highest,) = self.db.execute(
            f"SELECT max(coalesce((SELECT max(id) FROM {table}), 0), coalesce((SELECT "
            "CAST(value AS INTEGER) FROM meta WHERE key = ?), 0))",
            [high],
        ).fetchone()
        return int(highest)

    def _next_ids(self, table: str, high: str, n: int = 1) -> int:
        """The first of `n` new ids of `table`, above the highest ever given (meta `high`,
        raised to the last of them)."""
        first = self._highest_id(table, high) + 1
        if n:
            self.db.execute("UPDATE meta SET value = ? WHERE key = ?", [first + n - 1, high])
        return first

    def count_chunks(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM chunks").fetchone()[0])

    def has_vectors(self, model: str) -> bool:
        sql = "SELECT 1 FROM embeddings WHERE model = ? LIMIT 1"
        return self.db.execute(sql, [model]).fetchone() is not None

    def chunk_ids(self, after: int = 0, upto: int | None = None) -> list[int]:
        """Ids of the chunks in (after, upto], ascending."""
        rows = self.db.execute(
            "SELECT id FROM chunks WHERE id > ? AND id <= ? ORDER BY id",
            [after, upto if upto is not None else 2**62],
        )
        return [r[0] for r in rows.fetchall()]

    def newest_chunk_ids(self, kind: str, limit: int) -> list[int]:
        """Ids of the newest `limit` chunks of documents of `kind` ("email", "note"), by the
        document's date, newest first."""
        rows = self.db.execute(
            "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id "
            "WHERE d.kind = ? ORDER BY d.date DESC, c.id DESC LIMIT ?",
            [kind, limit],
        )
        return [r[0] for r in rows.fetchall()]

    def last_import(self) -> str:
        """When a document was last added or changed (ISO time; '' when none)."""
        row = self.db.execute("SELECT max(imported_at) FROM documents").fetchone()
        return row[0] or ""

    def identity(self) -> str:
        return self.db.execute("SELECT value FROM meta WHERE key = 'db_id'").fetchone()[0]

    def _bump_version(self, what: Literal["chunks", "vectors"] = "chunks") -> None:
        self.db.execute(
            "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = ?", [f"{what}_version"]
        )

    def upsert(self, doc: Document, chunks: Sequence[Chunk]) -> tuple[Outcome, str]:
        """Store a document and its chunks; return what happened and the key it is stored under.

        Same key and content: nothing changes. A note whose content changed is replaced. Two
        different mails sharing a Message-ID are both kept (the second under `<id>#<hash>`).
        """
        with self.transaction():
            return self._upsert(doc, chunks)

    def _upsert(self, doc: Document, chunks: Sequence[Chunk]) -> tuple[Outcome, str]:
        existing = self._find(doc.source_key)
        if existing is None:
            self._insert(doc, chunks, doc.source_key)
            return "added", doc.source_key
        if existing["content_hash"] == doc.content_hash:
            self.fill_reply_headers(existing, doc)
            self._fill_names(existing, doc)
            self._fill_bulk(existing, doc)
            return ("duplicate" if doc.kind == "email" else "unchanged"), doc.source_key
        if doc.kind == "note" or _same_place(existing, doc):
            # a note edited; or the same mail file read again and read otherwise now (a new
            # reading of its charset, its date, its parts), kept once, not twice
            self._delete_document(existing["id"])
            self._insert(doc, chunks, doc.source_key)
            return "updated", doc.source_key
        alt_key = f"{doc.source_key}#{doc.content_hash[:12]}"
        if self._find(alt_key) is not None:
            return "duplicate", alt_key
        self._insert(doc, chunks, alt_key)
        return "added", alt_key

    def _fill_names(self, existing: dict, doc: Document) -> None:
        """A mail stored before names were kept (migration 0004) gets them on re-import. The
        chunks version moves: the address book (mail/book_file.py) is built from the names."""
        if doc.kind != "email" or existing.get("sender_name") is not None:
            return
        self.db.execute(
            "UPDATE documents SET sender_name = ?, recipient_names = ?, cc_names = ? WHERE id = ?",
            [doc.sender_name, doc.recipient_names, doc.cc_names, existing["id"]],
        )
        self._bump_version()

    def _fill_bulk(self, existing: dict, doc: Document) -> None:
        """A mail stored before its list headers were read (migration 0008) gets its mark on
        re-import."""
        if doc.kind == "email" and existing.get("bulk") is None:
            sql = "UPDATE documents SET bulk = ? WHERE id = ?"
            self.db.execute(sql, [doc.bulk, existing["id"]])

    def _find(self, key: str) -> dict | None:
        rows = list(self.db["documents"].rows_where("source_key = ?", [key], limit=1))
        return rows[0] if rows else None

    def _insert(self, doc: Document, chunks: Sequence[Chunk], key: str) -> None:
        doc_id = self._next_ids("documents", "doc_id_high")  # never a removed mail's number
        self.db["documents"].insert({"id": doc_id, **_document_row(doc, key)})
        first = self._next_ids("chunks", "chunk_id_high", len(chunks))  # never a removed one's
        self.db["chunks"].insert_all(
            {
                "id": first + i,
                "document_id": doc_id,
                "ordinal": c.ordinal,
                "text": c.text,
                "token_count": c.token_count,
                "content_hash": c.content_hash,
            }
            for i, c in enumerate(chunks)
        )
        if doc.attachments:
            self.db["attachments"].insert_all(
                {"document_id": doc_id, **asdict(a)} for a in doc.attachments
            )
        self._bump_version()

    def _delete_document(self, doc_id: int) -> None:
        self.db.execute("DELETE FROM documents WHERE id = ?", [doc_id])
        self._bump_version()
        self._bump_version("vectors")

    def remove_notes_missing(
        self, root: Path, seen_keys: set[str], kept_under: Iterable[str] = ()
    ) -> tuple[int, list[int]]:
        """Delete notes stored from under `root` that this import did not see (deleted files),
        but none from under a path of `kept_under` (a folder that could not be read). Returns
        how many, and the ids of the chunks that went with them (for the QA entries that quoted
        them)."""
        prefix = str(root.resolve())
        rows = self.db.execute(
            "SELECT id, source_key, source_path FROM documents WHERE kind = 'note' "
            "AND (source_path = ? OR source_path LIKE ? ESCAPE '\\')",
            [prefix, _like_prefix(prefix)],
        ).fetchall()
        kept = {str(Path(p).resolve()) for p in kept_under if is_under(p, prefix)}
        gone = [
            doc_id
            for doc_id, key, path in rows
            if key not in seen_keys and not (kept and _under_any(path, kept))
        ]
        return len(gone), self.remove_mail(gone)

    def record_issues(self, started: str, issues: Sequence[Issue]) -> None:
        with self.transaction():
            self._insert_issues(started, issues)

    def _insert_issues(self, started: str, issues: Sequence[Issue]) -> None:
        self.db["import_issues"].insert_all(
            {
                "run_started": started,
                "path": i.path,
                "location": i.where,
                "reason": i.reason,
                "severity": i.severity,
            }
            for i in issues
        )

    # -- reads --------------------------------------------------------------------------------

    def chunk_texts(self) -> tuple[np.ndarray, list[str]]:
        rows = self.db.execute("SELECT id, text FROM chunks ORDER BY id").fetchall()
        return np.array([r[0] for r in rows], dtype=np.int64), [r[1] for r in rows]

    def chunk_records(self, ids: Sequence[int]) -> list[ChunkRecord]:
        """Records for `ids`, in the order given (unknown ids are left out)."""
        if not len(ids):
            return []
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(
            "SELECT c.id, c.text, d.kind, d.title, d.sender, d.date, d.message_id, "
            "CASE d.kind WHEN 'note' THEN d.source_path ELSE '' END, d.folder, c.ordinal, "
            f"c.token_count, c.content_hash, CASE d.kind WHEN 'email' THEN d.thread_id ELSE '' END "
            f"FROM chunks c JOIN documents d ON d.id = c.document_id "
            f"WHERE c.id IN ({marks})",
            [int(i) for i in ids],
        ).fetchall()
        by_id = {r[0]: ChunkRecord(*(v if v is not None else "" for v in r)) for r in rows}
        return [by_id[int(i)] for i in ids if int(i) in by_id]

    def chunk_documents(self) -> dict[int, list[int]]:
        """Each document's chunk ids, in order (the night's coverage plan reads them per mail)."""
        out: dict[int, list[int]] = {}
        for chunk_id, doc_id in self.db.execute(
            "SELECT id, document_id FROM chunks ORDER BY document_id, ordinal"
        ).fetchall():
            out.setdefault(doc_id, []).append(chunk_id)
        return out

    def document_of_chunk(self, chunk_id: int) -> dict | None:
        """The whole stored message or note a chunk comes from (headers, body, quoted tail,
        attachments), or None when the chunk is gone."""
        row = self.db.execute(
            "SELECT d.kind, d.title, d.sender, d.recipients, d.cc, d.date, d.message_id, "
            "d.source_path, d.folder, d.body, d.quoted, d.attachments "
            "FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.id = ?",
            [int(chunk_id)],
        ).fetchone()
        if row is None:
            return None
        keys = "kind title sender recipients cc date message_id source_path folder body quoted"
        doc = dict(zip(keys.split(), (v or "" for v in row[:-1]), strict=True))
        doc["attachments"] = json.loads(row[-1] or "[]")
        return doc

    def library_counts(self) -> dict[str, int]:
        """Documents, emails and notes: the few counts the app's header and welcome need
        (stats() reads every chunk and vector besides)."""
        kinds = dict(self.db.execute("SELECT kind, count(*) FROM documents GROUP BY kind"))
        return {
            "documents": sum(kinds.values()),
            "emails": kinds.get("email", 0),
            "notes": kinds.get("note", 0),
        }

    def stats(self) -> dict[str, int | dict[str, int]]:
        q = self.db.execute
        kinds = dict(q("SELECT kind, count(*) FROM documents GROUP BY kind").fetchall())
        return {
            "documents": sum(kinds.values()),
            "emails": kinds.get("email", 0),
            "notes": kinds.get("note", 0),
            "threads": q(
                "SELECT count(DISTINCT thread_id) FROM documents WHERE kind = 'email'"
            ).fetchone()[0],
            "chunks": q("SELECT count(*) FROM chunks").fetchone()[0],
            "chunk_tokens": q("SELECT coalesce(sum(token_count), 0) FROM chunks").fetchone()[0],
            "embedded_chunks": q("SELECT count(*) FROM embeddings").fetchone()[0],
            "import_issues": q("SELECT count(*) FROM import_issues").fetchone()[0],
            "chunks_version": self.version("chunks"),
            "folders": dict(
                q(
                    "SELECT coalesce(folder, ''), count(*) FROM documents WHERE kind = 'email' "
                    "GROUP BY folder ORDER BY folder"
                ).fetchall()
            ),
        }


def _same_place(existing: dict, doc: Document) -> bool:
    """The stored mail was read from where `doc` was: the same file (Maildir, .eml), or the
    same place in the same mbox."""
    same_file = existing.get("source_path") == doc.source_path and bool(doc.source_path)
    return same_file and existing.get("source_offset") == doc.source_offset


def _under_any(path: str, folders: set[str]) -> bool:
    """`path` is one of `folders` or inside one of them."""
    return path in folders or any(str(parent) in folders for parent in Path(path).parents)


def _like_prefix(prefix: str) -> str:
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped.rstrip("/") + "/%"


def _document_row(doc: Document, key: str) -> dict:
    return {
        "kind": doc.kind,
        "source_key": key,
        "message_id": doc.message_id,
        "thread_id": None if doc.kind == "email" else "",  # a mail's: its thread's, once computed
        "in_reply_to": doc.in_reply_to or None,
        "refs": " ".join(doc.references) or None,
        "sender": doc.sender,
        "recipients": doc.recipients,
        "cc": doc.cc,
        "sender_name": doc.sender_name,
        "recipient_names": doc.recipient_names,
        "cc_names": doc.cc_names,
        "date": doc.date.isoformat() if doc.date else None,
        "bulk": doc.bulk if doc.kind == "email" else None,
        "title": doc.title,
        "folder": doc.folder,
        "source_path": doc.source_path,
        "source_offset": doc.source_offset,
        "attachments": json.dumps([asdict(a) for a in doc.attachments]),
        "mtime": doc.mtime,
        "content_hash": doc.content_hash,
        "body": doc.text,
        "quoted": doc.quoted,
        "replaced_chars": doc.replaced_chars,
        "imported_at": datetime.now(UTC).isoformat(),
    }
