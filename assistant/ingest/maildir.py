"""Maildir and Maildir++ folders: cur/ and new/ of the root (INBOX) and of every subfolder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from assistant.ingest.bounds import DEFAULT_MAX_PART_BYTES
from assistant.ingest.emails import read_message
from assistant.ingest.types import Document, Issue


def is_maildir(path: Path) -> bool:
    return path.is_dir() and ((path / "cur").is_dir() or (path / "new").is_dir())


def read_maildir(
    root: Path, max_part_bytes: int = DEFAULT_MAX_PART_BYTES
) -> Iterator[Document | Issue]:
    for folder, file in _messages(root):
        yield _read_file(file, folder, max_part_bytes)


def count_maildir(root: Path) -> int:
    return sum(1 for _ in _messages(root))


def _messages(root: Path) -> Iterator[tuple[str, Path]]:
    for folder, box in boxes(root):
        for sub in ("new", "cur"):
            for file in sorted((box / sub).glob("*")) if (box / sub).is_dir() else []:
                if not file.name.startswith(".") and file.is_file():
                    yield folder, file


def boxes(root: Path) -> Iterator[tuple[str, Path]]:
    """The folders of the Maildir at `root` (itself as INBOX, then its subfolders by name), each
    with the name its mail is stored under."""
    if is_maildir(root):
        yield "INBOX", root
    for dirpath, dirnames, _files in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in ("cur", "new", "tmp"))
        child = Path(dirpath)
        if child != root and is_maildir(child):
            yield child.relative_to(root).as_posix().lstrip("."), child


def _read_file(file: Path, folder: str, max_part_bytes: int) -> Document | Issue:
    try:
        raw = file.read_bytes()
    except OSError as exc:
        return Issue(str(file), "", f"cannot read ({exc.strerror}); skipped")
    return read_message(raw, str(file), "", folder=folder, max_part_bytes=max_part_bytes)
