"""A file written whole or not at all, private to the user: the KV blobs here and the app's
index files (assistant/home.py) write through the same function."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

FILE_MODE = 0o600


def replace_atomically(target: Path, write: Callable[[Path], None], suffix: str = ".tmp") -> None:
    """`write` a new file of its own (private) beside `target`, then rename it into place: two
    writers of one file at once (an import, a night, a question building the same index or KV
    node) never share a temporary file, and a reader sees the old file or the new one whole."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.stem}.", suffix=suffix)
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        os.chmod(tmp, FILE_MODE)
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)
