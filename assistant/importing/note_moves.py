"""Where a note read at a path no stored note has comes from: a stored note with its content whose
file is gone (its notes folder moved, renamed, synced to another place or copied to another
machine with the old one gone; the note renamed or moved to another folder). Notes are keyed by
their path, so without this the whole folder was added again and the old notes, not under the
folder read, stayed: every note twice.

Such a note is moved, not added: its document takes the new key, path, folder and date, and keeps
its id, chunks and vectors (nothing is embedded again). Its content is the same when its bytes are
(the content hash) and so its title and text, and so the chunks they make. A stored note whose
file is still there is not taken: the new file is a copy, added as a note of its own, as before.
A file that cannot be looked at is not judged gone. Only the stored notes with the new note's
content are looked at (the content hash's index), and only their files: no other folder is read.

A note edited as it moved has another content, so it is added. Its old version goes after the
read when its file is gone, other notes of its folder moved (by content) to the folder the new
one was added in, and the new one has its file name there: the same note, edited (counted as
updated, not added). Any other stored note whose file is gone stays until its folder is read
again (a folder gone for good keeps its notes: a drive not mounted looks the same). Nothing whose
file is still there is removed.
"""

from __future__ import annotations

import os

from assistant.importing.import_sweep import gone
from assistant.ingest.types import Document
from assistant.knowledge.source_rows import StoredNote
from assistant.knowledge.store import KnowledgeStore


class NoteMoves:
    """The notes moved in one import run, and what they say about their folders."""

    def __init__(self, store: KnowledgeStore) -> None:
        self.store = store
        self.folders: dict[str, set[str]] = {}  # a folder notes moved from → the ones they went to
        self.added: set[str] = set()  # the paths of the notes this run added

    def take(self, doc: Document) -> bool:
        """The stored note `doc` is, moved to `doc`'s file (True), when its own file is gone and
        no note is stored under `doc`'s key; False: store `doc` as before."""
        rows = self.store.notes_like(doc)
        if not rows or any(r.key == doc.source_key for r in rows):
            return False
        if self.store.has_document(doc.source_key):  # edited in place: updated, not moved
            return False
        name = os.path.basename(doc.source_path)  # one of the same name first (copies alike)
        for row in sorted(rows, key=lambda r: (os.path.basename(r.source_path) != name, r.id)):
            if gone(row.source_path):
                self.store.move_note(row.id, doc)
                old, new = os.path.dirname(row.source_path), os.path.dirname(doc.source_path)
                self.folders.setdefault(old, set()).add(new)
                return True
        return False

    def stored(self, doc: Document, outcome: str) -> None:
        if outcome == "added":
            self.added.add(doc.source_path)

    def edited(self) -> list[int]:
        """The stored notes whose edited version this run added where their folder moved."""
        return [row.id for old, new in self.folders.items() for row in self.store.notes_in(old)
                if _successor(row, new, self.added) and gone(row.source_path)]  # fmt: skip


def _successor(row: StoredNote, folders: set[str], added: set[str]) -> bool:
    name = os.path.basename(row.source_path)
    return any(os.path.join(folder, name) in added for folder in folders)
