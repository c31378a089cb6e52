"""A folder of .eml files, one message per file (subfolders are Sources of their own)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from assistant.ingest.bounds import DEFAULT_MAX_PART_BYTES
from assistant.ingest.emails import read_message
from assistant.ingest.types import Document, Issue


def eml_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(p for p in root.iterdir() if p.suffix.lower() == ".eml" and p.is_file())


def read_eml(
    root: Path, max_part_bytes: int = DEFAULT_MAX_PART_BYTES
) -> Iterator[Document | Issue]:
    for file in eml_files(root):
        try:
            raw = file.read_bytes()
        except OSError as exc:
            yield Issue(str(file), "", f"cannot read ({exc.strerror}); skipped")
            continue
        folder = file.parent.name if root.is_dir() else ""
        yield read_message(raw, str(file), "", folder=folder, max_part_bytes=max_part_bytes)
