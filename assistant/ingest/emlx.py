"""Apple Mail's `Mailboxes` folders: `<Name>.mbox/…/Messages/<id>.emlx`, one message per file.

An .emlx file is a line with the message's byte count, the RFC 822 message of that many bytes,
then an XML plist of Apple Mail's flags (not read). A `.partial.emlx` is a message whose
attachments Apple Mail keeps elsewhere: its headers and text are read, with a warning saying so.
The folder name is the nearest `<Name>.mbox` folder above the file (nested ones joined with '/').
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from assistant.ingest.bounds import DEFAULT_MAX_PART_BYTES
from assistant.ingest.emails import read_message
from assistant.ingest.types import Document, Issue

PARTIAL_NOTE = "Apple Mail .partial.emlx: its attachments are stored apart and were not read"


def emlx_files(root: Path) -> list[Path]:
    """The .emlx files directly in `root` (subfolders are Sources of their own)."""
    return sorted(p for p in root.iterdir() if p.name.lower().endswith(".emlx") and p.is_file())


def emlx_folder(file: Path) -> str:
    """'Work/Clients' for …/Work.mbox/Clients.mbox/<uuid>/Data/Messages/1.emlx."""
    names = [p.name[: -len(".mbox")] for p in file.parents if p.name.lower().endswith(".mbox")]
    return "/".join(reversed(names)) or file.parent.name


def read_emlx(
    root: Path, max_part_bytes: int = DEFAULT_MAX_PART_BYTES
) -> Iterator[Document | Issue]:
    for file in emlx_files(root):
        yield _read_file(file, max_part_bytes)


def _read_file(file: Path, max_part_bytes: int) -> Document | Issue:
    try:
        with file.open("rb") as fh:
            count_line = fh.readline(32)
            size = int(count_line.strip())
            raw = fh.read(size)
    except OSError as exc:
        return Issue(str(file), "", f"cannot read ({exc.strerror}); skipped")
    except ValueError:
        return Issue(str(file), "", "not an .emlx file (no byte count on its first line); skipped")
    if len(raw) < size:
        return Issue(str(file), "", f"truncated: {len(raw)} of {size} bytes; skipped")
    item = read_message(raw, str(file), "", folder=emlx_folder(file), max_part_bytes=max_part_bytes)
    if isinstance(item, Document) and file.name.lower().endswith(".partial.emlx"):
        item.warnings.append(PARTIAL_NOTE)
    return item
