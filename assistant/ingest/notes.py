"""A folder of notes (.md, .markdown, .txt): one Document per file, keyed by its absolute path."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from assistant.ingest.bounds import DEFAULT_MAX_PART_BYTES, bound_text, cut_part
from assistant.ingest.decode import decode_bytes
from assistant.ingest.types import Document, Issue

NOTE_SUFFIXES = {".md", ".markdown", ".txt"}


def note_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(
        p
        for p in root.iterdir()
        if p.suffix.lower() in NOTE_SUFFIXES and p.is_file() and not p.name.startswith(".")
    )


def note_key(path: Path) -> str:
    return f"note:{path.resolve()}"


def read_notes(
    root: Path, max_part_bytes: int = DEFAULT_MAX_PART_BYTES
) -> Iterator[Document | Issue]:
    for file in note_files(root):
        try:
            raw = file.read_bytes()
            mtime = file.stat().st_mtime
        except OSError as exc:
            yield Issue(str(file), "", f"cannot read ({exc.strerror}); skipped")
            continue
        kept, cut = cut_part(raw, max_part_bytes)
        text, replaced, _ = decode_bytes(kept, None)  # (a UTF-16 note has NULs until decoded)
        if "\x00" in text[:4096]:
            reason = "binary content, not a text note; skipped (if it is text, save it as UTF-8)"
            yield Issue(str(file), "", reason)
            continue
        yield _note(file, raw, text, replaced, cut, mtime)


def _note(
    file: Path, raw: bytes, text: str, replaced: int, cut: str | None, mtime: float
) -> Document:
    text, left_out = bound_text(text.lstrip("\ufeff"))
    return Document(
        kind="note",
        source_key=note_key(file),
        title=note_title(text, file),
        text=text.strip(),
        content_hash=hashlib.sha256(raw).hexdigest(),
        source_path=str(file.resolve()),
        folder=file.parent.name,
        date=datetime.fromtimestamp(mtime, tz=UTC),
        mtime=mtime,
        replaced_chars=replaced,
        warnings=[w for w in (cut, *left_out) if w],
    )


def note_title(text: str, file: Path) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line.lstrip("#").strip() or file.stem
    return file.stem
