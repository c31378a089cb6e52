"""After an import has read its paths: the stored mail that vanished from them goes, and mail
that moved (another Maildir folder, new/ → cur/, a flag renamed its file, another offset of a
rewritten mbox) is kept once, at its new place.

Nothing stored is lost to a read that failed: only a path read to its end is judged (a cancelled
read, or a path that could not be opened, removes nothing); a mail whose message or mbox gave an
error this time is kept; a mail read from a file is removed only once that file is gone (a folder
that cannot be listed looks empty, its files are still there); a mail in an mbox only when that
mbox was read whole. A mail is one row however many folders hold a copy (KnowledgeStore.upsert),
so it is removed only when no read of this run saw it, no remembered Maildir holds its file now
(moved to a folder another remembered path reads), and no mbox left unread this run (skipped as
unchanged, read from its old end, or another remembered path) holds its Message-ID.

Mail read this run whose stored place is outside the paths read is followed when that place is
gone: its folder or mbox moved as a whole (`mv ~/Mail ~/Archive`, then `assistant import
~/Archive`) is the same stored mail at its new place, or the old path would hold it forever
(said "not there now" at every import, and a new ~/Mail read later would take it for deleted).
A place not there because the drive or share it was on is not mounted is not followed: the mail
seen elsewhere is a copy, and the drive, still holding the stored mail, stays remembered.
"""

from __future__ import annotations

import mmap
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from assistant.importing.maildir_moves import elsewhere
from assistant.ingest.types import Document, Issue
from assistant.knowledge.source_rows import Move, StoredMail
from assistant.knowledge.store import KnowledgeStore


@dataclass(frozen=True)
class Place:
    path: str  # resolved, to compare
    given: str  # as the reader wrote it, to store
    folder: str
    offset: int | None


@dataclass
class Reads:
    """What one import run read."""

    seen: dict[str, list[Place]] = field(default_factory=dict)  # stored key → where read
    roots: list[Path] = field(default_factory=list)  # paths read to their end
    whole: set[str] = field(default_factory=set)  # mboxes read whole
    failed: set[str] = field(default_factory=set)  # files and mboxes that gave an error
    note_roots: list[Path] = field(default_factory=list)  # paths read that hold notes folders
    notes: set[str] = field(default_factory=set)  # the keys of the notes read (or unreadable)
    _dirs: dict[str, str] = field(default_factory=dict)  # folder → resolved, once per folder

    def saw(self, key: str, doc: Document) -> None:
        place = Place(self.where(doc.source_path), doc.source_path, doc.folder, doc.source_offset)
        self.seen.setdefault(key, []).append(place)

    def failed_on(self, issue: Issue) -> None:
        if issue.severity == "error":
            self.failed.add(self.where(issue.path))

    def where(self, path: str) -> str:
        """`path` with its folder resolved (one resolve per folder, not per mail)."""
        if not path:
            return ""
        folder, name = os.path.split(path)
        if folder not in self._dirs:
            self._dirs[folder] = str(Path(folder or ".").resolve())
        return os.path.join(self._dirs[folder], name)


@dataclass
class Swept:
    removed_chunks: list[int] = field(default_factory=list)
    removed: int = 0
    moved: int = 0


def sweep(
    store: KnowledgeStore, reads: Reads, mboxes: Iterable[Path], maildirs: Iterable[Path] = ()
) -> Swept:
    """Remove the mail under `reads.roots` that vanished, move the mail that moved. `mboxes`:
    the remembered mboxes; those not read whole this run may hold a copy of a vanished mail.
    `maildirs`: the remembered Maildirs; a vanished Maildir mail whose file one holds now (moved
    to a folder not read this run) is moved there, not removed (maildir_moves.py)."""
    rows = {row.id: row for root in reads.roots for row in store.mail_from(root)}
    vanished: list[StoredMail] = []
    moves: list[Move] = []
    swept = Swept()
    for row in rows.values():
        where = reads.where(row.source_path)
        if _stays(row, where, reads):
            continue
        if places := reads.seen.get(row.key):
            new = places[0]
            moves.append(Move(row.id, new.given, new.folder, new.offset))
            swept.moved += new.path != where
        else:
            vanished.append(row)
    found, vanished = elsewhere(vanished, maildirs)  # moved to a Maildir not read this run
    followed = _followed(store, reads, {row.key for row in rows.values()})
    store.move_mail(moves + found + followed)
    swept.moved += len(found) + len(followed)
    unread = [p for p in mboxes if reads.where(str(p)) not in reads.whole]
    gone = _not_in(vanished, unread, store)
    swept.removed_chunks = store.remove_mail([row.id for row in gone])
    swept.removed = len(gone)
    return swept


def _stays(row: StoredMail, where: str, reads: Reads) -> bool:
    """The mail stays where it is stored: read there this run, or its place gave an error, or
    was not read this run (a skipped or appended mbox), or its file is still there."""
    places = reads.seen.get(row.key, [])
    if where in reads.failed or (where, row.source_offset) in {(p.path, p.offset) for p in places}:
        return True
    return not (where in reads.whole or gone(row.source_path))


def _followed(store: KnowledgeStore, reads: Reads, under: set[str]) -> list[Move]:
    """Moves to where it was seen this run of the mail stored outside the paths read (its key
    not among those `under` them) whose stored place moved away."""
    verdicts: dict[str, bool] = {}
    moves: list[Move] = []
    for row in store.mail_keyed([key for key in reads.seen if key not in under]):
        if moved_away(row.source_path, verdicts):
            new = reads.seen[row.key][0]
            moves.append(Move(row.id, new.given, new.folder, new.offset))
    return moves


def _not_in(rows: list[StoredMail], mboxes: list[Path], store: KnowledgeStore) -> list[StoredMail]:
    """The rows whose mail no mbox of `mboxes` holds; a row found in one is moved there (a mail
    without a Message-ID cannot be looked for: it is kept while such an mbox exists)."""
    if not rows or not mboxes:
        return rows
    gone = [row for row in rows if row.message_id]
    for box in mboxes:
        found = _message_ids_in(box, {row.message_id for row in gone})
        if found is None:  # an mbox that cannot be read now: nothing is removed this time
            return []
        store.move_mail([Move(r.id, str(box), box.stem, None) for r in gone
                         if r.message_id in found])  # fmt: skip
        gone = [row for row in gone if row.message_id not in found]
    return gone


def _message_ids_in(path: Path, ids: set[str]) -> set[str] | None:
    """Which of `ids` a Message-ID header line of the mbox at `path` names (none when the file
    is gone; None when it cannot be read: what cannot be checked is not removed)."""
    if not ids:
        return set()
    alternatives = b"|".join(re.escape(i.encode()) for i in ids)
    pattern = re.compile(rb"(?im)^message-id:\s*<(" + alternatives + rb")>")
    try:
        with path.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            return {m.group(1).decode() for m in pattern.finditer(mm)}
    except (ValueError, FileNotFoundError):  # an empty file cannot be mapped
        return set()
    except OSError:
        return None


def gone(path: str) -> bool:
    """The file no longer exists (one that cannot be looked at is not judged gone)."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError:
        return False
    return False


# folders in which drives are mounted, each in a folder of its own (/media/me/USB, /Volumes/USB)
MEDIA = ("/media", "/run/media", "/mnt", "/Volumes")


def moved_away(path: str, verdicts: dict[str, bool]) -> bool:
    """The file is gone and its folder was not on a drive or share not mounted now (`verdicts`:
    each folder's, judged once)."""
    if not gone(path):
        return False
    folder = os.path.dirname(path)
    if folder not in verdicts:
        verdicts[folder] = not unmounted(folder)
    return verdicts[folder]


def unmounted(folder: str) -> bool:
    """What is left of `folder` looks like a drive or share not mounted now rather than a folder
    moved away (a move leaves the folder it was in as it was): the nearest part still there is
    a link to nothing (~/Mail linking to a drive), an empty folder (a mount point with nothing
    on it), a folder that cannot be listed, a folder drives are mounted in, or one holding
    another mount point. A drive mounted there holds what moved on it: not unmounted. A
    relative path (mail stored before issue 35) cannot be placed: not judged moved either."""
    if not os.path.isabs(folder):
        return True
    part = folder
    while not os.path.lexists(part):
        part = os.path.dirname(part)
    try:
        names = os.listdir(part)  # (a link to nothing: FileNotFoundError)
    except OSError:
        return True
    if not names:
        return True
    if os.path.ismount(part):
        return False
    if part in MEDIA or os.path.dirname(part) in MEDIA:
        return True
    return any(os.path.ismount(os.path.join(part, name)) for name in names)
