"""Readers for each source format. They yield Documents and Issues and never touch SQLite."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from assistant.ingest.bounds import DEFAULT_MAX_PART_BYTES
from assistant.ingest.eml import eml_files, read_eml
from assistant.ingest.emlx import emlx_files, read_emlx
from assistant.ingest.maildir import count_maildir, is_maildir, read_maildir
from assistant.ingest.mbox import count_mbox, looks_like_mbox, read_mbox, starts_with_headers
from assistant.ingest.notes import NOTE_SUFFIXES, note_files, read_notes
from assistant.ingest.types import Attachment, Document, Issue

SourceKind = Literal["mbox", "maildir", "eml", "emlx", "notes"]

__all__ = ["Attachment", "Document", "Issue", "Source", "SourceError", "detect_sources"]


class SourceError(ValueError):
    """A path that cannot be imported at all (missing, empty, unknown format)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


@dataclass(frozen=True)
class Source:
    kind: SourceKind
    path: Path

    def read(
        self, max_part_bytes: int = DEFAULT_MAX_PART_BYTES, start: int = 0
    ) -> Iterator[Document | Issue]:
        """Each message or note; a text part over `max_part_bytes` is cut (with a warning).
        `start`: an mbox is read from that byte on."""
        if self.kind == "mbox":
            return _listed(self.path, read_mbox(self.path, max_part_bytes, start))
        if self.kind == "maildir":
            return read_maildir(self.path, max_part_bytes)
        readers = {"eml": read_eml, "emlx": read_emlx, "notes": read_notes}
        return _listed(self.path, readers[self.kind](self.path, max_part_bytes))

    def count(self, start: int = 0) -> int:
        """How many messages or files `read` will go through (for progress bars)."""
        if self.kind == "maildir":
            return count_maildir(self.path)
        try:
            if self.kind == "mbox":
                return count_mbox(self.path, start)
            listing = {"eml": eml_files, "emlx": emlx_files, "notes": note_files}[self.kind]
            return len(listing(self.path))
        except OSError:  # gone since it was found: `read` says so
            return 0


def _listed(folder: Path, items: Iterator[Document | Issue]) -> Iterator[Document | Issue]:
    """The items of a folder's or an mbox's reader; one that cannot be read when its turn
    comes (moved, deleted or locked since the import found it) an error naming it, not a
    traceback that stopped the whole import. (Each file's own read error is its reader's
    Issue.)"""
    try:
        yield from items
    except OSError as exc:
        yield Issue(
            str(folder),
            "",
            f"cannot be read now ({exc.strerror or exc}); skipped: import it again once it is back",
        )


def detect_sources(path: Path, skipped: list[Issue] | None = None) -> list[Source]:
    """What a path holds: an mbox file, a Maildir, .eml files, notes — or a folder of several.

    Folders are searched recursively; each eml/notes Source covers the files directly in its folder.
    """
    skipped = [] if skipped is None else skipped
    try:
        if not path.exists():
            raise SourceError(path, "no such file or folder")
        if path.is_file():
            return [_detect_file(path)]
        if is_maildir(path):
            return [Source("maildir", path)]
        path.iterdir().close()  # a folder that cannot be listed is said so, not "nothing here"
    except OSError as exc:
        raise SourceError(path, _unreadable(exc)) from None
    sources = _detect_folder(path, skipped, {})
    if not sources:
        raise SourceError(
            path,
            "nothing to import here (looked for mbox files, Maildir cur/new folders, "
            ".eml files, Apple Mail .emlx files and .md/.txt notes)",
        )
    return sources


def _detect_file(path: Path) -> Source:
    if _is_mbox(path):
        return Source("mbox", path)
    if path.suffix.lower() == ".eml":
        return Source("eml", path)
    if path.suffix.lower() in NOTE_SUFFIXES:
        return Source("notes", path)
    raise SourceError(
        path,
        "not an mbox (an mbox starts with a 'From ' line or mail headers), .eml, .md or .txt file",
    )


def _is_mbox(path: Path) -> bool:
    """A From_ line first; or mail headers first in a file not named as an .eml or a note (an mbox
    that lost its first From_ line, or a message saved alone)."""
    if looks_like_mbox(path):
        return True
    return path.suffix.lower() not in {".eml", *NOTE_SUFFIXES} and starts_with_headers(path)


def _detect_folder(path: Path, skipped: list[Issue], seen: dict[str, Path]) -> list[Source]:
    """The sources under `path`; a folder or file that cannot be looked at (lost+found, a
    folder another user owns, a mail store the system guards) goes to `skipped` and the rest
    is imported. A folder reached again through a link (`seen`: each folder looked at so far,
    by its real path) is looked at once: a link to a folder above it was followed forty deep,
    and two such links doubled the folders at each level, an import that never ended."""
    if _seen_before(path, seen, skipped):
        return []
    try:
        children = sorted(p for p in path.iterdir() if not p.name.startswith("."))
    except OSError as exc:
        skipped.append(Issue(str(path), "", _unreadable(exc)))
        return []
    maildirs, folders, files = [], [], []
    for child in children:
        try:
            if is_maildir(child):
                if not _seen_before(child, seen, skipped):
                    maildirs.append(child)
            elif child.is_file():
                child.open("rb").close()  # else an mbox it cannot read would pass unsaid
                files.append(child)
            elif child.is_dir():
                folders.append(child)
        except OSError as exc:
            skipped.append(Issue(str(child), "", _unreadable(exc)))
    sources = [Source("maildir", p) for p in maildirs]
    dirs, readable = set(folders), set(files)
    for child in children:  # in name order, as before
        if child in dirs:
            sources.extend(_detect_folder(child, skipped, seen))
        elif child in readable and _is_mbox(child):
            sources.append(Source("mbox", child))
    if any(p.name.lower().endswith(".emlx") for p in files):
        sources.append(Source("emlx", path))
    if any(p.suffix.lower() == ".eml" for p in files):
        sources.append(Source("eml", path))
    if any(p.suffix.lower() in NOTE_SUFFIXES for p in files):
        sources.append(Source("notes", path))
    return sources


def _seen_before(folder: Path, seen: dict[str, Path], skipped: list[Issue]) -> bool:
    """Whether `folder` is one looked at already under another path (a warning says so)."""
    real = os.path.realpath(folder)
    first = seen.setdefault(real, folder)
    if first == folder:
        return False
    reason = f"the same folder as {first} (a link to it); read there, not again"
    skipped.append(Issue(str(folder), "", reason, "warning"))
    return True


def _unreadable(exc: OSError) -> str:
    return (
        f"cannot be read ({exc.strerror or exc}); skipped: check its permissions (on macOS, "
        "give the terminal Full Disk Access to read Mail's folders)"
    )
