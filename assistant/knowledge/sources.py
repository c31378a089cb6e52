"""The sources an import read (the `sources` table's one owner): what `assistant import` with no
path reads again, and how much of each it can skip. An mbox whose size and mtime are as last
read is skipped without parsing; one that grew with its old end unchanged (mail appended, as
mail clients do) is read from that end only; anything else is read whole (stored mail is found
again by key, so nothing is added twice)."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sqlite_utils import Database

from assistant.knowledge.db import at_or_under
from cache.db import write

TAIL = 4096  # bytes before a read's end whose hash says the file still ends there


@dataclass(frozen=True)
class Plan:
    """What an import does with one source: skip it, read it from `offset`, or read it all."""

    action: Literal["skip", "append", "full"]
    offset: int = 0


class SourceLog:
    def __init__(self, db: Database) -> None:
        self.db = db

    def plan(self, path: Path, kind: str) -> Plan:
        """How much of `path` to read now."""
        if kind != "mbox":
            return Plan("full")
        row = self.db.execute(
            "SELECT size, mtime, tail, resume FROM sources WHERE path = ? AND kind = ?",
            [str(path.resolve()), kind],
        ).fetchone()
        if row is None:
            return Plan("full")
        size, mtime, tail, resume = row
        stat = path.stat()
        if stat.st_size == size and stat.st_mtime == mtime:
            return Plan("skip")
        if stat.st_size > size and tail_hash(path, size) == tail:
            # from the last message read, not the old end: a mail client may have been
            # writing it then, and its rest came with the append (read again, it replaces it)
            return Plan("append", resume if resume is not None and resume <= size else size)
        return Plan("full")

    def remember(self, path: Path, kind: str, resume: int | None = None) -> None:
        """`path` was read to its end as it is now (kind "path": a path the user gave, which
        `assistant import` with no path reads again); `resume`: where an mbox's last message
        starts."""
        stat = path.stat()
        tail = tail_hash(path, stat.st_size) if kind == "mbox" else ""
        write(
            self.db,
            "INSERT OR REPLACE INTO sources (path, kind, size, mtime, tail, imported, resume) "
            "VALUES (?,?,?,?,?,?,?)",
            [str(path.resolve()), kind, stat.st_size, stat.st_mtime, tail, time.time(), resume],
        )

    def paths(self) -> list[Path]:
        """The paths the user imported before, in the order first read."""
        rows = self.db.execute(
            "SELECT path FROM sources WHERE kind = 'path' ORDER BY rowid"
        ).fetchall()
        return [Path(r[0]) for r in rows]

    def forget(self, path: Path) -> None:
        """`path` is read no more: its row and those of the sources read under it go (what was
        stored from them stays; the caller knows nothing is)."""
        where, params = at_or_under("path", str(path).rstrip("/") or "/")  # the key's index
        write(self.db, f"DELETE FROM sources WHERE {where}", params)

    def mboxes(self) -> list[Path]:
        """The mbox files imports have read."""
        rows = self.db.execute("SELECT path FROM sources WHERE kind = 'mbox' ORDER BY rowid")
        return [Path(r[0]) for r in rows.fetchall()]

    def maildirs(self) -> list[Path]:
        """The Maildirs imports have read."""
        rows = self.db.execute("SELECT path FROM sources WHERE kind = 'maildir' ORDER BY rowid")
        return [Path(r[0]) for r in rows.fetchall()]


def tail_hash(path: Path, end: int) -> str:
    with path.open("rb") as fh:
        fh.seek(max(0, end - TAIL))
        return hashlib.sha256(fh.read(min(end, TAIL))).hexdigest()
