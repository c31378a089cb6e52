"""The knowledge bank's thread reads and writes (a part of KnowledgeStore, the documents table's
one owner): the headers threads are computed from, the thread_id each mail is given, a thread's
mails, and the chunks that only repeat another mail of their thread. assistant/mail/threads.py
decides; this stores."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from sqlite_utils import Database

from assistant.ingest.types import Document
from assistant.knowledge.db import rows_in


@dataclass(frozen=True)
class MailHeaders:
    """What a mail's thread is found from."""

    doc_id: int
    message_id: str
    in_reply_to: str
    refs: tuple[str, ...]
    subject: str
    sender: str
    recipients: str
    cc: str
    date: str  # ISO 8601, "" when undated
    bulk: str = ""  # the list/bulk mark of its headers (ingest/emails.py bulk_mark)
    thread_id: str = ""  # the thread it is stored in; "" until its thread is first computed
    subject_key: str | None = None  # its normalized subject as stored (None: not yet)


@dataclass(frozen=True)
class ThreadMail:
    """One mail of a thread, as `assistant thread` prints it."""

    doc_id: int
    message_id: str
    sender: str
    date: str
    subject: str
    body: str
    thread_id: str
    thread_by: str


NONE: Mapping[str, str] = MappingProxyType({})
HEADERS = (
    "SELECT id, message_id, in_reply_to, refs, title, sender, recipients, cc, date, bulk, "
    "thread_id, subject_key FROM documents"
)


def headers(rows: Iterable[Sequence]) -> list[MailHeaders]:
    """MailHeaders of rows read by HEADERS."""
    return [
        MailHeaders(r[0], r[1] or "", r[2] or "", tuple((r[3] or "").split()),
                    *(v or "" for v in r[4:11]), r[11])
        for r in rows
    ]  # fmt: skip


_MAIL = "SELECT id, message_id, sender, date, title, body, thread_id, thread_by FROM documents"


class ThreadRows:
    """Mixed into KnowledgeStore: uses its db, transaction(), version() and _bump_version()."""

    db: Database

    def mail_headers(self) -> list[MailHeaders]:
        rows = self.db.execute(f"{HEADERS} WHERE kind = 'email' ORDER BY id").fetchall()
        return headers(rows)

    def fill_reply_headers(self, row: dict, doc: Document) -> None:
        """A mail stored before its reply headers were kept, imported again: they are stored
        now, and its threads computed again."""
        if row.get("in_reply_to") or row.get("refs") or not (doc.in_reply_to or doc.references):
            return
        self.db.execute(  # the trigger notes the change (knowledge/db.py _THREAD_CHANGES)
            "UPDATE documents SET in_reply_to = ?, refs = ? WHERE id = ?",
            [doc.in_reply_to or None, " ".join(doc.references) or None, row["id"]],
        )

    def threads_rules(self) -> str:
        """The rules the stored threads were computed by (assistant/mail/threads.py RULES);
        '-1' when they must be computed in full."""
        row = self.db.execute("SELECT value FROM meta WHERE key = 'threads_version'").fetchone()
        return "-1" if row is None else str(row[0])

    def threads_due(self, rules: str) -> bool:
        """Whether mail changed since threads were last computed, or they were computed by
        other `rules` (or never were)."""
        if self.threads_rules() != rules:
            return True
        return self.db.execute("SELECT 1 FROM thread_changes LIMIT 1").fetchone() is not None

    def put_threads(
        self, assigned: Mapping[int, tuple[str, str | None]], merged: Mapping[str, str] = NONE
    ) -> int:
        """Store each mail's (thread_id, thread_by), and the ids of threads merged into another
        (id → the id kept); return how many mails changed."""
        with self.transaction():
            before = self.db.execute("SELECT total_changes()").fetchone()[0]
            self.db.conn.executemany(
                "UPDATE documents SET thread_id = ?, thread_by = ? WHERE id = ? "
                "AND (thread_id IS NOT ? OR thread_by IS NOT ?)",
                [(t, by, doc_id, t, by) for doc_id, (t, by) in assigned.items()],
            )
            changed = self.db.execute("SELECT total_changes()").fetchone()[0] - before
            self._merge_ids(merged)
        return int(changed)

    def _merge_ids(self, merged: Mapping[str, str]) -> None:
        """Record the merged ids (an id merged before into one merged now follows it); forget
        those whose thread has no mail left."""
        for old, kept in merged.items():
            self.db.execute("UPDATE thread_aliases SET thread_id = ? WHERE thread_id = ?",
                            [kept, old])  # fmt: skip
            self.db.execute("INSERT OR REPLACE INTO thread_aliases VALUES (?, ?)", [old, kept])
        self.db.execute(
            "DELETE FROM thread_aliases WHERE NOT EXISTS "
            "(SELECT 1 FROM documents d WHERE d.thread_id = thread_aliases.thread_id)"
        )

    def merged_ids(self) -> set[str]:
        """The ids of threads merged into another: no new thread is given one."""
        return {r[0] for r in self.db.execute("SELECT alias FROM thread_aliases").fetchall()}

    def current_thread(self, thread_id: str) -> str | None:
        """The thread `thread_id` names now: itself, or the thread it was merged into; None
        when it has no mail."""
        for sql in (
            "SELECT thread_id FROM documents WHERE thread_id = ? LIMIT 1",
            "SELECT thread_id FROM thread_aliases a WHERE alias = ? AND EXISTS "
            "(SELECT 1 FROM documents d WHERE d.thread_id = a.thread_id)",
        ):
            row = self.db.execute(sql, [thread_id]).fetchone()
            if row is not None:
                return str(row[0])
        return None

    def mark_threads_done(self, rules: str, upto: int) -> None:
        """The threads are computed by `rules` for every change noted up to `upto`."""
        with self.transaction():
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('threads_version', ?)", [rules])
            self.db.execute("DELETE FROM thread_changes WHERE id <= ?", [upto])

    def thread_key(self, key: str) -> str | None:
        """The thread_id for `key`: a thread_id (one merged into another: that one), a mail's
        Message-ID or document id."""
        key = key.strip().strip("<>")
        if (thread_id := self.current_thread(key)) is not None:
            return thread_id
        for sql in (
            "SELECT thread_id FROM documents WHERE kind = 'email' AND message_id = ? LIMIT 1",
            "SELECT thread_id FROM documents WHERE kind = 'email' AND source_key = ? LIMIT 1",
            "SELECT thread_id FROM documents WHERE kind = 'email' AND CAST(id AS TEXT) = ?",
        ):
            row = self.db.execute(sql, [key]).fetchone()
            if row is not None and row[0]:
                return str(row[0])
        return None

    def thread_mails(self, thread_id: str) -> list[ThreadMail]:
        """The mails of a thread, oldest first."""
        rows = self.db.execute(
            f"{_MAIL} WHERE kind = 'email' AND thread_id = ? ORDER BY date, id", [thread_id]
        ).fetchall()
        return [ThreadMail(r[0], *(v or "" for v in r[1:])) for r in rows]

    def mails_in_threads(self, thread_ids: Iterable[str]) -> list[ThreadMail]:
        ids = sorted({t for t in thread_ids if t})
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(
            f"{_MAIL} WHERE kind = 'email' AND thread_id IN ({marks}) ORDER BY date, id", ids
        ).fetchall()
        return [ThreadMail(r[0], *(v or "" for v in r[1:])) for r in rows]

    def chunks_of(self, doc_ids: Sequence[int]) -> list[tuple[int, int, str]]:
        """(chunk id, document id, text) of the documents' chunks, by document and order."""
        sql = (
            "SELECT id, document_id, text FROM chunks WHERE document_id IN ({}) "
            "ORDER BY document_id, ordinal"
        )
        return rows_in(self.db, sql, sorted({int(d) for d in doc_ids}))

    def drop_chunks(self, chunk_ids: Sequence[int]) -> None:
        """Take chunks out of the index (their document keeps its whole text)."""
        if not chunk_ids:
            return
        with self.transaction():
            self.db.conn.executemany(
                "DELETE FROM chunks WHERE id = ?", [(int(i),) for i in chunk_ids]
            )
            self._bump_version()
            self._bump_version("vectors")
