"""The KV budget sized to the machine: a share of the free disk where the cache lives, at least
a floor and at most a cap (and never more than half of what is free), unless the user set one."""

from __future__ import annotations

import shutil
from pathlib import Path

GIB = 2**30
SHARE = 0.10  # of the free disk
FLOOR = 2 * GIB
CAP = 20 * GIB


def disk_budget(free: int, share: float = SHARE, floor: int = FLOOR, cap: int = CAP) -> int:
    """`share` of `free` bytes, within [floor, cap], and at most half of `free`."""
    return int(min(cap, max(floor, share * free), free // 2))


def kv_budget(setting_mb: float, root: Path) -> int:
    """Bytes: the user's `kv_budget_mb` where above 0, else the disk's share at `root`."""
    if setting_mb > 0:
        return int(setting_mb * 2**20)
    return disk_budget(shutil.disk_usage(root).free)
