"""The KV budget sized to the machine: a share of the free disk where the cache lives, at least
a floor and at most a cap (and never more than half of what is free), unless the user set one.
What the KV cache already holds counts as free: it is room the cache has, and a budget sized
without it shrank after every night that filled it, evicting that night's nodes."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

GIB = 2**30
SHARE = 0.10  # of the free disk
FLOOR = 2 * GIB
CAP = 20 * GIB
USED = "SELECT coalesce(sum(size), 0) FROM blobs WHERE kind = ?"  # a kind's bytes stored


def disk_budget(free: int, share: float = SHARE, floor: int = FLOOR, cap: int = CAP) -> int:
    """`share` of `free` bytes, within [floor, cap], and at most half of `free`."""
    return int(min(cap, max(floor, share * free), free // 2))


def kv_budget(setting_mb: float, root: Path, held: int = 0) -> int:
    """Bytes: the user's `kv_budget_mb` where above 0, else the disk's share at `root`, with
    the `held` bytes the KV cache already stores there counted as free."""
    if setting_mb > 0:
        return int(setting_mb * 2**20)
    return disk_budget(shutil.disk_usage(root).free + held)


def held_bytes(cache_db: Path, kind: str = "kv") -> int:
    """What the cache database at `cache_db` counts as stored for `kind` (cache/blobs.py's
    rows), read only; 0 where there is no database yet or it cannot be read."""
    if not cache_db.is_file():
        return 0
    try:
        with closing(sqlite3.connect(f"{cache_db.resolve().as_uri()}?mode=ro", uri=True)) as db:
            return int(db.execute(USED, [kind]).fetchone()[0])
    except sqlite3.Error:  # no blobs table yet, or damaged: opening it says so, not this
        return 0
