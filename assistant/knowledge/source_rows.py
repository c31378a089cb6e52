"""The knowledge bank's reads and writes of mail and notes by where they were read from (a part of
KnowledgeStore, the documents table's one owner): the mail stored from under a folder or from one
file, removing mail that vanished from its source (chunks, vectors, attachments and FTS rows go
with it by ON DELETE CASCADE and triggers), moving a stored mail or note to where it is now, and
whether anything stored is still from a path."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlite_utils import Database

from assistant.ingest.types import Document
from assistant.knowledge.db import at_or_under, rows_in


@dataclass(frozen=True)
class StoredMail:
    """One stored mail and the place it was last read from."""

    id: int
    key: str
    message_id: str
    source_path: str
    source_offset: int | None


@dataclass(frozen=True)
class StoredNote:
    id: int
    key: str
    source_path: str


@dataclass(frozen=True)
class Move:
    doc_id: int
    source_path: str
    folder: str
    offset: int | None


# a StoredMail's columns
_STORED_MAIL = (
    "SELECT id, source_key, coalesce(message_id, ''), source_path, source_offset "
    "FROM documents WHERE kind = 'email'"
)
# the places documents are stored from, each once: an mbox (its mail has an offset), or the
# folder of any other file ('a/b/c' → 'a/b/': the name trimmed off)
_PLACES = (
    "SELECT DISTINCT CASE WHEN source_offset IS NULL "
    "THEN rtrim(source_path, replace(source_path, '/', '')) ELSE source_path END "
    "FROM documents WHERE coalesce(source_path, '') != ''"
)


class SourceRows:
    """Mixed into KnowledgeStore: uses its db, transaction() and _delete_document()."""

    db: Database

    def mail_from(self, root: Path) -> list[StoredMail]:
        """The mail stored from the file `root` or from anywhere under the folder `root` (by its
        absolute path, as given or resolved; mail stored by a relative path, as imports before
        issue 35 stored it, is left out: what it names depends on where the import ran)."""
        found: dict[int, StoredMail] = {}
        for form in dict.fromkeys((str(root.absolute()), str(root.resolve()))):
            for row in self._rows_under(form.rstrip("/") or "/"):
                found[row.id] = row
        return list(found.values())

    def _rows_under(self, path: str) -> Iterator[StoredMail]:
        where, params = at_or_under("source_path", path)
        rows = self.db.execute(f"{_STORED_MAIL} AND {where}", params).fetchall()
        return (StoredMail(*r) for r in rows)

    def mail_keyed(self, keys: Sequence[str]) -> list[StoredMail]:
        """The stored mail of `keys` (by the key's index, a few hundred keys a query)."""
        rows = rows_in(self.db, f"{_STORED_MAIL} AND source_key IN ({{}})", keys)
        return [StoredMail(*r) for r in rows]

    def remove_mail(self, doc_ids: Sequence[int]) -> list[int]:
        """Delete the documents `doc_ids` (in one transaction); return the ids of the chunks
        that went with them, for the QA entries that quoted them."""
        if not doc_ids:
            return []
        with self.transaction():
            chunk_ids: list[int] = []
            for doc_id in doc_ids:
                rows = self.db.execute("SELECT id FROM chunks WHERE document_id = ?", [doc_id])
                chunk_ids.extend(r[0] for r in rows.fetchall())
                self._delete_document(doc_id)
        return chunk_ids

    def move_mail(self, moves: Sequence[Move]) -> None:
        """Each mail is now read from its move's `source_path` (in its `folder`): moved, its
        old copy gone, or further on in a rewritten mbox. One transaction for them all."""
        if not moves:
            return
        with self.transaction():
            self.db.conn.executemany(
                "UPDATE documents SET source_path = ?, folder = ?, source_offset = ? WHERE id = ?",
                [(m.source_path, m.folder, m.offset, m.doc_id) for m in moves],
            )

    def notes_like(self, doc: Document) -> list[StoredNote]:
        """The stored notes with `doc`'s content: its bytes, and so its title and text and the
        chunks they make (by the content hash's index)."""
        rows = self.db.execute(
            "SELECT id, source_key, source_path FROM documents WHERE kind = 'note' "
            "AND content_hash = ? AND title = ? AND body = ?",
            [doc.content_hash, doc.title, doc.text],
        ).fetchall()
        return [StoredNote(*r) for r in rows]

    def notes_in(self, folder: str) -> list[StoredNote]:
        """The notes stored from files directly in `folder` (a resolved path)."""
        base = folder.rstrip("/")  # a range on source_path (its index), as at_or_under
        rows = self.db.execute(
            "SELECT id, source_key, source_path FROM documents WHERE kind = 'note' "
            "AND source_path >= ? AND source_path < ?",
            [base + "/", base + "0"],
        ).fetchall()
        return [StoredNote(*r) for r in rows if os.path.dirname(r[2]) == (base or "/")]

    def stored_under(self, root: Path) -> bool:
        """Some stored mail or note was read from `root` or from under it, both compared
        resolved: the sources table keeps `root` resolved, notes are stored resolved, but mail
        keeps the path it was read by, which may pass through a link (a linked home, ~/Mail
        linking to a drive, a linked mbox). The stored paths as written are looked up first
        (their index); then each mbox and folder documents are stored from is resolved (a link
        whose target is not there now, a drive's, still resolves to it)."""
        base = str(root.resolve())
        if any(self._holds(form) for form in dict.fromkeys((str(root.absolute()), base))):
            return True
        places = self.db.execute(_PLACES).fetchall()
        return any(self._place_holds(place, base) for (place,) in places)

    def _place_holds(self, place: str, base: str) -> bool:
        """Documents stored from `place` (an mbox, a folder) are from the resolved `base`: the
        place resolves into it, or `base` is inside the folder resolved and documents are
        stored from there. A relative place (mail stored before issue 35) cannot be placed: it
        counts as holding."""
        if not os.path.isabs(place):
            return True
        real = os.path.realpath(place)
        if base != real and is_under(base, real):
            return self._holds(os.path.join(place, os.path.relpath(base, real)))
        return is_under(real, base)

    def _holds(self, path: str) -> bool:
        """A document is stored from `path` or from under it (by source_path's index)."""
        where, params = at_or_under("source_path", path.rstrip("/") or "/")
        sql = f"SELECT 1 FROM documents WHERE {where} LIMIT 1"
        return self.db.execute(sql, params).fetchone() is not None

    def has_document(self, key: str) -> bool:
        sql = "SELECT 1 FROM documents WHERE source_key = ?"
        return self.db.execute(sql, [key]).fetchone() is not None

    def move_note(self, doc_id: int, doc: Document) -> None:
        """The stored note `doc_id` is now the file `doc` was read from: its key, path, folder
        and date are the new file's; its id, chunks and vectors stay."""
        with self.transaction():
            self.db.execute(
                "UPDATE documents SET source_key = ?, source_path = ?, folder = ?, date = ?, "
                "mtime = ? WHERE id = ?",
                [doc.source_key, doc.source_path, doc.folder,
                 doc.date.isoformat() if doc.date else None, doc.mtime, doc_id],
            )  # fmt: skip


def is_under(path: str, folder: str) -> bool:
    """`path` is `folder` or inside it (both written alike)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")
