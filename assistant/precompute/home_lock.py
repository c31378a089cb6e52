"""One precompute pass per home, across processes: the night's timer (`assistant precompute`)
and the app's idle pass share the cache's job queue, and a pass that starts puts every job left
'running' back in the queue (a killed pass's): a pass running in another process then had its
job taken and done a second time beside it.

The lock is an flock on `run/precompute.lock`, which the kernel drops when its process ends,
however it ends (kill -9, a crash, a power cut): no stale lock to clear. The file holds the
holder's pid, for the message of a pass that must wait or skip; a pass that ends empties it
(which needs no room on the disk), so the next one tells a pass that ended, whose jobs left
'running' are jobs it could not write back (the disk full), from one whose process was killed
(`last_ended`)."""

from __future__ import annotations

import fcntl
import logging
import os
import time
from pathlib import Path

from assistant.home import touch_private

log = logging.getLogger(__name__)
NAME = "precompute.lock"


class HomeLock:
    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / NAME
        self._fd: int | None = None
        self.last_ended = False  # the pass before ended, not killed (a lock file emptied)

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
        fresh = not self.path.exists()  # no pass before it here, or its file removed: unknown
        if fresh:
            touch_private(self.path)
        fd = os.open(self.path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self.last_ended = not fresh and os.fstat(fd).st_size == 0
        self._fd = fd
        pid = str(os.getpid()).encode()
        try:  # over the pid before, in place: a disk with no room left still takes it
            os.pwrite(fd, pid, 0)
            os.ftruncate(fd, len(pid))
        except OSError as exc:  # the lock is held all the same; messages name no pid
            log.warning("%s: this pass's pid not written (%s)", self.path, exc)
        return True

    def release(self, ended: bool = False) -> None:
        """Give the lock back; `ended`: the pass ended, and a job it left 'running' is one it
        could not write back, not a death of its process (the file emptied: no room needed)."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            if ended:
                try:
                    os.ftruncate(fd, 0)
                except OSError as exc:
                    log.warning("%s: not emptied as the pass ended (%s)", self.path, exc)
            os.close(fd)  # closing drops the flock

    def holder(self) -> str:
        """Who holds the lock, in words ("process 1234"), for a message."""
        try:
            pid = self.path.read_text(encoding="ascii").strip()
        except OSError:
            pid = ""
        return f"process {pid}" if pid.isdigit() else "another process"
