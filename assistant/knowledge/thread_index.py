"""The knowledge bank's record of what changed in the mail since threads were computed, and what
finds the threads a change touches (a part of KnowledgeStore, the documents table's one owner):
the changes the triggers note, mails by thread, subject, Message-ID or id, the threads of the
mails naming a reply header id, and how many mails each address is on. assistant/mail/
thread_update.py decides; this stores (the tables: knowledge/db.py _THREAD_CHANGES)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from sqlite_utils import Database

from assistant.knowledge.db import rows_in
from assistant.knowledge.thread_rows import HEADERS, MailHeaders, headers


@dataclass(frozen=True)
class Change:
    """A mail added, removed or changed since threads were computed; a removed or changed one
    with the thread it was in and what it was then."""

    id: int
    change: Literal["added", "removed", "changed"]
    doc_id: int
    thread_id: str
    title: str
    sender: str
    recipients: str
    cc: str


class ThreadIndex:
    """Mixed into KnowledgeStore: uses its db and transaction()."""

    db: Database

    def thread_changes(self) -> list[Change]:
        """The changes noted since threads were computed, in the order they were made."""
        rows = self.db.execute(
            "SELECT id, change, doc_id, thread_id, title, sender, recipients, cc "
            "FROM thread_changes ORDER BY id"
        ).fetchall()
        return [Change(r[0], r[1], r[2], *(v or "" for v in r[3:])) for r in rows]

    def mails_where(
        self, column: Literal["id", "thread_id", "subject_key", "message_id"], values: Iterable
    ) -> list[MailHeaders]:
        """The mails whose `column` is one of `values`."""
        sql = f"{HEADERS} WHERE kind = 'email' AND {column} IN ({{}})"
        return headers(rows_in(self.db, sql, sorted(set(values))))

    def threads_naming(self, ids: Iterable[str]) -> set[str]:
        """The threads of the mails whose In-Reply-To or References name one of `ids`."""
        sql = "SELECT thread_id FROM thread_refs WHERE ref IN ({})"
        return {r[0] for r in rows_in(self.db, sql, sorted(set(ids)))}

    def thread_exists(self, thread_id: str) -> bool:
        """Whether some mail is in `thread_id`, or it was merged into another."""
        sql = (
            "SELECT 1 FROM documents WHERE thread_id = ? "
            "UNION ALL SELECT 1 FROM thread_aliases WHERE alias = ? LIMIT 1"
        )
        return self.db.execute(sql, [thread_id, thread_id]).fetchone() is not None

    def email_count(self) -> int:
        sql = "SELECT count(*) FROM documents WHERE kind = 'email'"
        return int(self.db.execute(sql).fetchone()[0])

    def people_counts(self, at_least: int, addresses: Iterable[str]) -> dict[str, int]:
        """How many mails each address is on, for those on `at_least` mails and `addresses`."""
        rows = self.db.execute(
            "SELECT address, mails FROM thread_people WHERE mails >= ?", [at_least]
        ).fetchall()
        sql = "SELECT address, mails FROM thread_people WHERE address IN ({})"
        return dict(rows + rows_in(self.db, sql, sorted(set(addresses))))

    def stored_owners(self) -> set[str] | None:
        """The owners the stored threads were computed with (None: not known)."""
        row = self.db.execute("SELECT value FROM meta WHERE key = 'thread_owners'").fetchone()
        return None if row is None else set(json.loads(row[0]))

    def threads_epoch(self) -> int:
        """A counter that changes whenever threads are stored."""
        row = self.db.execute("SELECT value FROM meta WHERE key = 'threads_epoch'").fetchone()
        return 0 if row is None else int(row[0])

    def put_index(
        self,
        subjects: Mapping[int, str],
        refs: Mapping[str, str],
        people: Mapping[str, int],
        owners: Iterable[str],
        whole: bool,
    ) -> None:
        """Store each mail's normalized subject, the thread of each reply header id, how many
        mails each address is on (`whole`: these are all; else what changed: added to the
        stored counts) and the owners the threads were computed with."""
        with self.transaction():
            if whole:
                self.db.execute("DELETE FROM thread_refs")
                self.db.execute("DELETE FROM thread_people")
            self.db.conn.executemany(
                "UPDATE documents SET subject_key = ? WHERE id = ? AND subject_key IS NOT ?",
                [(key, doc_id, key) for doc_id, key in subjects.items()],
            )
            self.db.conn.executemany(
                "INSERT OR REPLACE INTO thread_refs VALUES (?, ?)", list(refs.items())
            )
            self.db.conn.executemany(
                "INSERT INTO thread_people VALUES (?, ?) ON CONFLICT (address) "
                "DO UPDATE SET mails = mails + excluded.mails",
                [(a, n) for a, n in people.items() if n],
            )
            self.db.execute("DELETE FROM thread_people WHERE mails <= 0")
            self.db.execute(
                "INSERT OR REPLACE INTO meta VALUES ('thread_owners', ?)",
                [json.dumps(sorted(owners))],
            )
            self.db.execute(
                "INSERT OR REPLACE INTO meta VALUES ('threads_epoch', ?)",
                [str(self.threads_epoch() + 1)],
            )
