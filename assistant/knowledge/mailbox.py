"""The knowledge bank's reads of mail as mail: the senders it holds, the chunks a filter leaves
(its WHERE clause over `documents d` comes from assistant/mail/filters.py), the mails behind
chunks with their copies, and one whole mail. Reads only: KnowledgeStore owns the tables."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sqlite_utils import Database

_WORD = re.compile(r"\w+")
BODY_MIN = 40  # a shorter text ("Thanks!") is no sign of a copy: one sender writes it often
BODY_PREFIX = 300  # characters of the text's words compared (a stub line may end one copy)
_MAIL_COLUMNS = (
    "id kind message_id thread_id sender sender_name recipients recipient_names cc cc_names "
    "date title folder source_path body quoted attachments content_hash"
).split()


@dataclass(frozen=True)
class MailRef:
    """The mail a chunk belongs to: what a result row shows and how copies are told apart."""

    document_id: int
    kind: str
    message_id: str
    sender: str
    sender_name: str
    date: str
    title: str
    folder: str
    copy_key: str  # same for copies of one mail (its content hash: subject, sender, date, text)
    note_path: str
    # a digest of the text's first words ("" under BODY_MIN characters of them): copies whose
    # Date or From a folder recorded differently (the Enron export shifts some by hours, keeps
    # a mail an assistant sent for her manager under either address, and appends an
    # attachment's stub line to one copy) share it
    body_digest: str = ""


class Mailbox:
    def __init__(self, db: Database) -> None:
        self.db = db

    def senders(self) -> list[tuple[str, str, int]]:
        """(stored From, name, mails) of every sender of mail, most mails first: one row per
        name an address sends under (a shared no-reply address sends under many)."""
        rows = self.db.execute(
            "SELECT sender, coalesce(sender_name, ''), count(*) FROM documents "
            "WHERE kind = 'email' AND coalesce(sender, '') != '' "
            "GROUP BY sender, coalesce(sender_name, '') ORDER BY count(*) DESC, sender"
        )
        return [(s, n or "", int(c)) for s, n, c in rows.fetchall()]

    def recipients(self) -> list[tuple[str, str, int]]:
        """(To or Cc header, its names, mails) of every distinct header of mail."""
        rows = self.db.execute(
            "SELECT h, n, count(*) FROM ("
            "SELECT recipients AS h, coalesce(recipient_names, '') AS n FROM documents "
            "WHERE kind = 'email' AND coalesce(recipients, '') != '' UNION ALL "
            "SELECT cc, coalesce(cc_names, '') FROM documents "
            "WHERE kind = 'email' AND coalesce(cc, '') != '') GROUP BY h, n"
        )
        return [(h, n, int(c)) for h, n, c in rows.fetchall()]

    def lines(self, head: int = 80, tail: int = 160) -> list[tuple[str, str, str, str]]:
        """(From, To, the body's first `head` and last `tail` characters) of every mail: the
        names a mail greets someone with and is signed with (mail/people.py)."""
        rows = self.db.execute(
            "SELECT sender, coalesce(recipients, ''), substr(coalesce(body, ''), 1, ?), "
            "substr(coalesce(body, ''), -?) FROM documents WHERE kind = 'email'",
            [head, tail],
        )
        return [tuple(r) for r in rows.fetchall()]

    def count(self, where: str, params: Sequence) -> int:
        """Mails (and notes) the filter leaves, copies of one mail counted once."""
        sql = f"SELECT count(DISTINCT d.content_hash) FROM documents d WHERE {where}"
        return int(self.db.execute(sql, list(params)).fetchone()[0])

    def chunk_ids(self, where: str, params: Sequence) -> np.ndarray:
        """Ids of the chunks of the documents the filter leaves, ascending. Read as one
        comma-joined text and sorted here: a row per id and SQLite's sort took this read twice
        as long at a month of a 100k-chunk home (bench/filters_scale.py's home). The documents
        are read first (CROSS JOIN keeps SQLite to that order), their chunks by the document's
        index: a filter no index serves (a name in the mail's text) is then tested once a
        mail, not once for each of its chunks (bench/results/commands_scale.json)."""
        (ids,) = self.db.execute(
            "SELECT group_concat(c.id) FROM documents d CROSS JOIN chunks c "
            f"ON c.document_id = d.id WHERE {where}",
            list(params),
        ).fetchone()
        return np.sort(np.fromstring(ids or "", dtype=np.int64, sep=","))

    def newest_chunk_ids(self, where: str, params: Sequence, limit: int) -> list[int]:
        """The first chunk of each of the newest `limit` documents the filter leaves: what a
        search of terms alone (no words to rank by) lists."""
        rows = self.db.execute(
            "SELECT (SELECT min(c.id) FROM chunks c WHERE c.document_id = d.id) AS first "
            f"FROM documents d WHERE {where} AND first IS NOT NULL "
            "ORDER BY d.date DESC, d.id DESC LIMIT ?",
            [*params, limit],
        ).fetchall()
        return [int(r[0]) for r in rows]

    def refs(self, chunk_ids: Sequence[int]) -> dict[int, MailRef]:
        """The mail (or note) of each chunk."""
        if not len(chunk_ids):
            return {}
        marks = ",".join("?" * len(chunk_ids))
        rows = self.db.execute(
            "SELECT c.id, d.id, d.kind, d.message_id, d.sender, d.sender_name, d.date, d.title, "
            "d.folder, d.content_hash, CASE d.kind WHEN 'note' THEN d.source_path ELSE '' END, "
            "d.body "
            f"FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.id IN ({marks})",
            [int(i) for i in chunk_ids],
        ).fetchall()
        return {r[0]: _ref(r[1:]) for r in rows}

    def folders(self, copy_keys: Sequence[str]) -> dict[str, list[str]]:
        """Every folder holding a copy of each mail (copies share the content hash)."""
        if not copy_keys:
            return {}
        marks = ",".join("?" * len(copy_keys))
        rows = self.db.execute(
            "SELECT content_hash, folder FROM documents "
            f"WHERE content_hash IN ({marks}) ORDER BY id",
            list(copy_keys),
        ).fetchall()
        out: dict[str, list[str]] = {}
        for key, folder in rows:
            if folder and folder not in out.setdefault(key, []):
                out[key].append(folder)
        return out

    def mail(self, ident: str) -> dict | None:
        """One whole mail or note by its document number or Message-ID (with or without <>)."""
        cols = ", ".join(_MAIL_COLUMNS)
        key = ident.strip().strip("<>")
        row = None
        if key.isdigit():
            row = self.db.execute(f"SELECT {cols} FROM documents WHERE id = ?", [int(key)])
            row = row.fetchone()
        if row is None:
            sql = f"SELECT {cols} FROM documents WHERE message_id = ? OR source_key = ? LIMIT 1"
            row = self.db.execute(sql, [key, key]).fetchone()
        if row is None:
            return None
        mail = dict(zip(_MAIL_COLUMNS, (v if v is not None else "" for v in row), strict=True))
        mail["attachments"] = json.loads(mail["attachments"] or "[]")
        mail["folders"] = self.folders([mail["content_hash"]]).get(mail["content_hash"], [])
        return mail


def text_digest(body: str) -> str:
    """A digest of the first words of `body` (case, spacing and punctuation aside); "" when
    short."""
    words = " ".join(_WORD.findall(body.lower()))[:BODY_PREFIX]
    if len(words) < BODY_MIN:
        return ""
    return hashlib.sha1(words.encode("utf-8", "replace")).hexdigest()


def _ref(row: Sequence) -> MailRef:
    doc_id, kind, message_id, sender, name, date, title, folder, key, note, body = (
        v if v is not None else "" for v in row
    )
    digest = text_digest(body)
    return MailRef(doc_id, kind, message_id, sender, name, date, title, folder, key, note, digest)
