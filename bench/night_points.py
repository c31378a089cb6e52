"""The parts of bench/night.py --one-night that touch files: the night's home snapshotted at a
point of the curve, and the night's totals so far."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def night_total(total: dict, got: dict) -> dict:
    """The night so far: its time and jobs summed, its stores as they are now."""
    jobs = dict(total["jobs"])
    for kind, k in got["jobs"].items():
        jobs[kind] = jobs.get(kind, 0) + k
    summed = {k: total[k] + got[k] for k in ("cpu_seconds", "wall_seconds")}
    return got | summed | {"jobs": jobs}


def snapshot(home: Path, to: Path) -> Path:
    """A copy of the night's home as it is now: its databases copied, its KV blobs hard-linked
    (the blob store replaces a file by rename, never writes into one)."""
    blobs = home / "cache" / "kv"

    def copy(src: str, dst: str) -> None:
        if Path(src).is_relative_to(blobs):
            os.link(src, dst)
        else:
            shutil.copy2(src, dst)

    shutil.copytree(home, to, ignore=shutil.ignore_patterns("run"), copy_function=copy)
    return to
