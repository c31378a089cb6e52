"""Blobs on disk with a checksum each, per-kind byte budgets and LFU eviction.

A kind's owner may set its own eviction order (`evict_order[kind]`): the KV tree does, so that
a prefix's parent outlives its children.

A blob whose file is missing, truncated or altered is detected on read, dropped and reported as
absent: the caller recomputes it. Nothing corrupt is ever returned.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import time
from collections.abc import Callable
from pathlib import Path

from sqlite_utils import Database

from cache.budget import USED
from cache.db import transaction, write
from cache.files import replace_atomically
from cache.room import unless_full

log = logging.getLogger(__name__)

# a file a writer left this long ago, with no row, is no write in progress: its writer stopped
# (a blob is written and its row inserted within milliseconds)
ORPHAN_AGE_S = 600.0
# a write that failed for want of room (the disk, or the user's quota, is full)
NO_ROOM = (errno.ENOSPC, errno.EDQUOT)


class BlobStore:
    def __init__(self, db: Database, root: Path, budgets: dict[str, int]) -> None:
        self.db = db
        self.root = root
        self.budgets = dict(budgets)
        self.on_evict: list[Callable[[str], None]] = []  # told each evicted or dropped key
        # kind -> (key, size) of its blobs, first to evict first; default: LFU, then LRU
        self.evict_order: dict[str, Callable[[], list[tuple[str, int]]]] = {}
        # why the last put stored nothing for want of disk space (None: it did not): a night
        # stops on it rather than compute KV it cannot keep
        self.no_room: str | None = None

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.bin"

    def put(self, kind: str, key: str, data: bytes) -> bool:
        """Store `data`; False (and nothing stored) when it alone exceeds the kind's budget, or
        when the disk has no room for it (`no_room` then says so; what is stored stays)."""
        if len(data) > self.budgets.get(kind, 0):
            return False
        if not self._write(key, data):
            return False
        now = time.time()
        digest = hashlib.sha256(data).hexdigest()
        with transaction(self.db):
            self.db.execute(
                "INSERT INTO blobs (key, kind, size, sha256, hits, created, last_used) "
                "VALUES (?, ?, ?, ?, 0, ?, ?) ON CONFLICT(key) DO UPDATE SET size = excluded.size, "
                "sha256 = excluded.sha256, last_used = excluded.last_used",
                [key, kind, len(data), digest, now, now],
            )
            self.evict(kind, keep=key)
        return True

    def _write(self, key: str, data: bytes) -> bool:
        """The blob's file, whole; False when the disk (or quota) is full: a cache that cannot
        grow is no error to the question or the night that computed the KV."""
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            # a night and a question computing the same node each write a file of their own
            replace_atomically(path, lambda tmp: tmp.write_bytes(data))
        except OSError as exc:
            if exc.errno not in NO_ROOM:
                raise
            self.no_room = (
                f"no space left on the disk for the cache in {self.root} ({exc.strerror}): "
                "free some space there, or set a smaller [cache] kv_budget_mb"
            )
            log.warning("cache blob %s not stored: %s", key, self.no_room)
            return False
        self.no_room = None
        return True

    def get(self, key: str) -> bytes | None:
        row = self.db.execute("SELECT size, sha256 FROM blobs WHERE key = ?", [key]).fetchone()
        if row is None:
            return None
        try:
            data = self._path(key).read_bytes()
        except OSError:
            data = None
        if data is None or len(data) != row[0] or hashlib.sha256(data).hexdigest() != row[1]:
            log.warning("cache blob %s is missing or corrupt; dropped, it will be recomputed", key)
            self.delete(key)
            return None
        self._touch(key)
        return data

    @unless_full("a KV blob's use")
    def _touch(self, key: str) -> None:
        write(
            self.db,
            "UPDATE blobs SET hits = hits + 1, last_used = ? WHERE key = ?",
            [time.time(), key],
        )

    def has(self, key: str) -> bool:
        """Whether `key` is stored (its file is checked only when it is read)."""
        return self.db.execute("SELECT 1 FROM blobs WHERE key = ?", [key]).fetchone() is not None

    def delete(self, key: str) -> None:
        """Drop the blob; its owner's listeners forget it in the same transaction."""
        with transaction(self.db):
            self.db.execute("DELETE FROM blobs WHERE key = ?", [key])
            self._path(key).unlink(missing_ok=True)
            for listener in self.on_evict:
                listener(key)

    def sweep_orphans(self, older_than: float = ORPHAN_AGE_S) -> tuple[int, int]:
        """Remove what a killed writer left: a temporary file it never renamed, or a blob file
        renamed into place whose row it never wrote (the budget never counts either). Only files
        older than `older_than` seconds: a writer in another process may be between its write
        and its row right now. Returns (files, bytes) removed."""
        if not self.root.is_dir():
            return 0, 0
        known = {row[0] for row in self.db.execute("SELECT key FROM blobs")}
        cutoff, files, size = time.time() - older_than, 0, 0
        for path in self.root.glob("*/*"):
            if not path.name.startswith(".") and (path.suffix != ".bin" or path.stem in known):
                continue  # a stored blob (or not ours): no stat for each of thousands
            try:
                stat = path.stat()
                if path.is_file() and stat.st_mtime < cutoff:
                    path.unlink()
                    files, size = files + 1, size + stat.st_size
            except OSError as exc:  # gone meanwhile, or not ours to remove: left as it is
                log.debug("orphan %s left: %s", path, exc)
        if files:
            log.info("removed %d files (%d bytes) a stopped writer left in %s", files, size,
                     self.root)  # fmt: skip
        return files, size

    def used(self, kind: str) -> int:
        return int(self.db.execute(USED, [kind]).fetchone()[0])

    def count(self, kind: str) -> int:
        return self.db.execute("SELECT count(*) FROM blobs WHERE kind = ?", [kind]).fetchone()[0]

    def evict(self, kind: str, keep: str | None = None) -> int:
        """Drop blobs in the kind's eviction order (by default least frequently used, ties least
        recently used) until under budget."""
        budget = self.budgets.get(kind, 0)
        with transaction(self.db):
            used = self.used(kind)
            if used <= budget:
                return 0
            dropped = 0
            order = self.evict_order.get(kind)
            rows = order() if order else self._lfu(kind)
            for key, size in rows:
                if used <= budget:
                    break
                if key == keep:
                    continue
                self.delete(key)
                used -= size
                dropped += 1
            return dropped

    def _lfu(self, kind: str) -> list[tuple[str, int]]:
        return self.db.execute(
            "SELECT key, size FROM blobs WHERE kind = ? ORDER BY hits, last_used", [kind]
        ).fetchall()
