"""The knowledge bank's reads and writes of mail by where it was read from (a part of
KnowledgeStore, the documents table's one owner): the mail stored from under a folder or from one
file, removing mail that vanished from its source (chunks, vectors, attachments and FTS rows go
with it by ON DELETE CASCADE and triggers), and moving a stored mail to where it is now."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlite_utils import Database


@dataclass(frozen=True)
class StoredMail:
    """One stored mail and the place it was last read from."""

    id: int
    key: str
    message_id: str
    source_path: str
    source_offset: int | None


@dataclass(frozen=True)
class Move:
    doc_id: int
    source_path: str
    folder: str
    offset: int | None


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
        # a range on source_path (its index) rather than LIKE: path + "/" .. path + "0"
        rows = self.db.execute(
            "SELECT id, source_key, coalesce(message_id, ''), source_path, source_offset "
            "FROM documents WHERE kind = 'email' "
            "AND (source_path = ? OR (source_path >= ? AND source_path < ?))",
            [path, path + "/", path + "0"],
        ).fetchall()
        return (StoredMail(*r) for r in rows)

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
