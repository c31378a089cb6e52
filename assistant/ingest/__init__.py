"""Readers for each source format. They yield Documents and Issues and never touch SQLite."""

from __future__ import annotations

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
            return read_mbox(self.path, max_part_bytes, start)
        readers = {"maildir": read_maildir, "eml": read_eml, "emlx": read_emlx, "notes": read_notes}
        return readers[self.kind](self.path, max_part_bytes)

    def count(self, start: int = 0) -> int:
        """How many messages or files `read` will go through (for progress bars)."""
        if self.kind == "mbox":
            return count_mbox(self.path, start)
        if self.kind == "maildir":
            return count_maildir(self.path)
        if self.kind == "emlx":
            return len(emlx_files(self.path))
        return len(eml_files(self.path) if self.kind == "eml" else note_files(self.path))


def detect_sources(path: Path) -> list[Source]:
    """What a path holds: an mbox file, a Maildir, .eml files, notes — or a folder of several.

    Folders are searched recursively; each eml/notes Source covers the files directly in its folder.
    """
    if not path.exists():
        raise SourceError(path, "no such file or folder")
    if path.is_file():
        return [_detect_file(path)]
    if is_maildir(path):
        return [Source("maildir", path)]
    sources = _detect_folder(path)
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


def _detect_folder(path: Path) -> list[Source]:
    children = sorted(p for p in path.iterdir() if not p.name.startswith("."))
    maildirs = [p for p in children if is_maildir(p)]
    sources = [Source("maildir", p) for p in maildirs]
    rest = [p for p in children if p not in maildirs]
    for child in rest:
        if child.is_file() and _is_mbox(child):
            sources.append(Source("mbox", child))
        elif child.is_dir():
            sources.extend(_detect_folder(child))
    if any(p.name.lower().endswith(".emlx") and p.is_file() for p in rest):
        sources.append(Source("emlx", path))
    if any(p.suffix.lower() == ".eml" and p.is_file() for p in rest):
        sources.append(Source("eml", path))
    if any(p.suffix.lower() in NOTE_SUFFIXES and p.is_file() for p in rest):
        sources.append(Source("notes", path))
    return sources
