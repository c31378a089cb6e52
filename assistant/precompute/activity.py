"""User activity, shared between processes through small files in the home dir.

The app touches `activity` on every keypress; the idle scheduler reads its age. While a user
question is being answered, a `busy-<pid>-<n>` file exists under `run/`; precompute work (in this
process or in `assistant precompute` running beside the app) checks for one between pieces of
work of well under a second and steps aside, so a user never waits for a background job.
While an import embeds, an `embedding-<pid>-<n>` file says so: a search elsewhere then tells the
user that dense search is still catching up, rather than to run the import again.

A marker is live while its maker holds an flock on it, which the kernel drops when that process
ends however it ends: a marker a killed process left is seen as stale even once its pid belongs
to another process (as after a reboot), where a check of the pid alone saw a user waiting
forever and held every night still, past its end.
"""

from __future__ import annotations

import fcntl
import itertools
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from assistant.home import make_private_dir, touch_private
from cache.files import FILE_MODE


class Activity:
    def __init__(self, root: Path) -> None:
        self.marker = root / "activity"
        self.run_dir = make_private_dir(root / "run")
        self._ids = itertools.count()

    def touch(self) -> None:
        """The user did something (a keypress, a command)."""
        if not self.marker.exists():
            touch_private(self.marker)
        os.utime(self.marker)

    def idle_seconds(self) -> float:
        """Seconds since the user last did anything (since forever: infinity)."""
        try:
            return max(0.0, time.time() - self.marker.stat().st_mtime)
        except FileNotFoundError:
            return float("inf")

    @contextmanager
    def busy(self) -> Iterator[None]:
        """Mark a user request in progress for as long as the block runs."""
        self.touch()
        with self._marked("busy"):
            yield

    @contextmanager
    def embedding(self) -> Iterator[None]:
        """Mark an import's embedding in progress for as long as the block runs."""
        with self._marked("embedding"):
            yield

    @contextmanager
    def _marked(self, kind: str) -> Iterator[None]:
        """The marker, locked before it is in place (renamed there), held for the block."""
        path = self.run_dir / f"{kind}-{os.getpid()}-{next(self._ids)}"
        making = self.run_dir / f".{path.name}"
        fd = os.open(making, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.replace(making, path)
            yield
        finally:
            path.unlink(missing_ok=True)
            making.unlink(missing_ok=True)
            os.close(fd)

    def user_waiting(self) -> bool:
        """A user request is in progress in some live process (leftovers of killed ones are
        removed on the way)."""
        return self._live("busy")

    def embedding_running(self) -> bool:
        """An import is embedding chunks in some live process, this one included."""
        return self._live("embedding")

    def _live(self, kind: str) -> bool:
        for entry in os.scandir(self.run_dir):
            if not entry.name.startswith(f"{kind}-"):
                continue
            if _held(entry.path):
                return True
            Path(entry.path).unlink(missing_ok=True)
        return False


def _held(path: str) -> bool:
    """Some live process holds the marker's lock (a marker gone meanwhile is not held)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # drops the lock this check took, if it took one
    return False
