"""One precompute pass per home, across processes: the night's timer (`assistant precompute`)
and the app's idle pass share the cache's job queue, and a pass that starts puts every job left
'running' back in the queue (a killed pass's): a pass running in another process then had its
job taken and done a second time beside it.

The lock is an flock on `run/precompute.lock`, which the kernel drops when its process ends,
however it ends (kill -9, a crash, a power cut): no stale lock to clear. The file holds the
holder's pid, for the message of a pass that must wait or skip."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from assistant.home import touch_private

NAME = "precompute.lock"


class HomeLock:
    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / NAME
        self._fd: int | None = None

    def acquire(self, timeout: float = 0.0, poll: float = 0.1) -> bool:
        """Take the lock, waiting up to `timeout` seconds; whether it is held now."""
        end = time.monotonic() + timeout
        while not self._try():
            if time.monotonic() >= end:
                return False
            time.sleep(poll)
        return True

    def _try(self) -> bool:
        if self._fd is not None:
            raise RuntimeError(f"{self.path} is held already by this pass")
        if not self.path.exists():
            touch_private(self.path)
        fd = os.open(self.path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing drops the flock

    def holder(self) -> str:
        """Who holds the lock, in words ("process 1234"), for a message."""
        try:
            pid = self.path.read_text(encoding="ascii").strip()
        except OSError:
            pid = ""
        return f"process {pid}" if pid.isdigit() else "another process"
