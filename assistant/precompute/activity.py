"""User activity, shared between processes through small files in the home dir.

The app touches `activity` on every keypress; the idle scheduler reads its age. While a user
question is being answered, a `busy-<pid>-<n>` file exists under `run/`; precompute work (in this
process or in `assistant precompute` running beside the app) checks for one between pieces of
work of well under a second and steps aside, so a user never waits for a background job.
While an import embeds, an `embedding-<pid>-<n>` file says so: a search elsewhere then tells the
user that dense search is still catching up, rather than to run the import again.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from assistant.home import make_private_dir, touch_private


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
        path = self.run_dir / f"{kind}-{os.getpid()}-{next(self._ids)}"
        touch_private(path)
        try:
            yield
        finally:
            path.unlink(missing_ok=True)

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
            if _alive(int(entry.name.split("-")[1])):
                return True
            Path(entry.path).unlink(missing_ok=True)
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
