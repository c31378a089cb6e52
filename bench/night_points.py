"""The parts of bench/night.py that need no model: the night's home snapshotted at a point of
the curve (--one-night), the covered questions' first token, and the 8-hour projection."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from statistics import median


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


NIGHT_MINUTES = 8 * 60


def covered(rows: Sequence[dict]) -> dict:
    """Of the questions the model answered (no QA hit), those whose every prompt chunk came
    from the KV tree: how many, and their first token's p50 and mean (issue 47's ≤ 3 s)."""
    written = [r for r in rows if not r.get("qa_hit")]
    full = [r["ttft"] for r in written if r.get("kv_chunks") and
            r.get("kv_chunks_reused") == r["kv_chunks"] and r.get("ttft") is not None]  # fmt: skip
    return {
        "written": len(written),
        "covered_questions": len(full),
        "ttft_p50_covered_s": median(full) if full else None,
        "ttft_mean_covered_s": sum(full) / len(full) if full else None,
    }


def projection(points: list[dict], chunks_recent: int | None, budget: int | None = None) -> dict:
    """Chunk nodes an 8-hour night makes at the pace of the longest night measured (its
    chunk_kv jobs: the tree's node count also holds the reader's header nodes; over its time
    up to its last chunk node where the point has it: a night the budget stopped making nodes
    went on with other jobs), and, given the KV budget in bytes, how many of them it holds at
    that night's bytes per chunk job (a job's header node and the QA bank's prompts counted
    in): the night stops there, so the share of the last six weeks is of the nodes it holds."""
    longest = max(points, key=lambda p: p["minutes"])
    if not longest["minutes"]:
        return {}
    made = longest["jobs"].get("chunk_kv", longest["nodes"])
    per_minute = made / (longest.get("node_seconds", 0.0) / 60 or longest["minutes"])
    out = {"nodes_per_hour": per_minute * 60, "nodes_8h": per_minute * NIGHT_MINUTES}
    held = out["nodes_8h"]
    if budget and made and longest.get("kv_bytes"):
        out["budget_bytes"] = budget
        out["bytes_per_chunk_job"] = longest["kv_bytes"] / made
        out["nodes_in_budget"] = budget // out["bytes_per_chunk_job"]
        held = min(held, out["nodes_in_budget"])
    if chunks_recent:
        out["share_of_last_6_weeks_8h"] = min(1.0, held / chunks_recent)
    return out
