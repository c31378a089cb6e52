"""mbox files, streamed message by message with byte offsets.

A 20 MB attachment costs only its own message, and a truncated file still yields every message
before the cut."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from assistant.ingest.emails import read_message
from assistant.ingest.types import Document, Issue


def looks_like_mbox(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(5) == b"From "
    except OSError:
        return False


def count_mbox(path: Path) -> int:
    with path.open("rb") as fh:
        return sum(1 for _ in _separators(fh))


def _separators(fh: BinaryIO) -> Iterator[int]:
    previous_blank = True
    for line in iter(fh.readline, b""):
        if previous_blank and line.startswith(b"From "):
            yield 1
        previous_blank = line in (b"\n", b"\r\n")


def read_mbox(path: Path) -> Iterator[Document | Issue]:
    folder = path.stem
    with path.open("rb") as fh:
        for offset, raw, complete in _split(fh):
            item = read_message(raw, str(path), f"offset {offset}", offset=offset, folder=folder)
            if not complete and isinstance(item, Document):
                item.warnings.append("the file ends inside this message (truncated?)")
            yield item


def _split(fh: BinaryIO) -> Iterator[tuple[int, bytes, bool]]:
    """Yield (offset of its From_ line, message bytes, ended cleanly) per message."""
    start: int | None = None
    lines: list[bytes] = []
    previous_blank = True
    offset = 0
    for line in iter(fh.readline, b""):
        if line.startswith(b"From ") and previous_blank:
            if start is not None:
                yield start, _unescape(lines), True
            start, lines = offset, []
        elif start is not None:
            lines.append(line)
        previous_blank = line in (b"\n", b"\r\n")
        offset += len(line)
    if start is not None:
        yield start, _unescape(lines), bool(lines) and lines[-1].endswith(b"\n")


def _unescape(lines: list[bytes]) -> bytes:
    """mboxrd: '>From ' at the start of a body line was escaped on write; undo one level."""
    return b"".join(ln[1:] if ln.startswith(b">From ") else ln for ln in lines)
