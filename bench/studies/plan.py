"""Which chunks get KV nodes on a mailbox far larger than the KV budget: newest-first vs
access-skew planning ([precompute] plan), f16 vs q8_0 nodes ([llm] kv_type), side by side.

    python bench/studies/plan.py [--scale 20] [--minutes 3] [--budget-mb 256]
                                 [--cells access-f16,...]

The mailbox and the question stream are bench/studies/plan_mailbox.py's. Each cell copies the
mailbox home, asks the past questions as far as the KV plan sees them (each one's prompt chunks are
retrieved and recorded in the history, as the pipeline records an asked question), then
precomputes with [cache] reuse = "any-order" for a fixed `--minutes` of CPU time. Then, for
each future question, it retrieves the prompt's chunks and counts those with an intact
[system, chunk] node in the KV tree: the chunks any-order reuse places instead of prefilling
("served"). The model answers nothing, so the figure is the plan's coverage alone. Writes
bench/results/plan.json.
"""

from __future__ import annotations

import os
import sys

os.environ["HF_HUB_OFFLINE"] = "1"  # never reach for the hub, even before the model loads

# ruff: noqa: E402
import argparse
import shutil
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

from _common import demo_context, log, print_table, require_demo, write_results
from plan_mailbox import Stream, grow, question_stream

from assistant.precompute.runner import Precompute
from assistant.services import Services, open_services

CELLS = ("newest-f16", "access-f16", "newest-q8_0", "access-q8_0")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=20, help="mailbox chunks per demo chunk")
    parser.add_argument("--minutes", type=float, default=3.0, help="precompute CPU time per cell")
    parser.add_argument("--budget-mb", type=float, default=256.0, help="[cache] kv_budget_mb")
    parser.add_argument("--cells", default=",".join(CELLS), help="PLAN-KVTYPE, comma-separated")
    parser.add_argument("--out", default="plan", help="results name")
    return parser.parse_args()


def build_mailbox(root: Path, scale: int) -> tuple[Path, dict]:
    log("importing the demo corpus")
    demo = demo_context(root / "demo", None)
    ctx = open_services(root / "mailbox")
    log(f"growing it {scale}x")
    sizes = grow(demo.store, ctx.store, demo.embedder.name, scale)
    return ctx.home.root, sizes


def open_cell(name: str, base: Path, root: Path, args: argparse.Namespace) -> Services:
    plan, kv_type = name.split("-", 1)
    home = root / name
    shutil.copytree(base, home)
    ctx = open_services(home)
    ctx.settings.precompute.plan = plan
    ctx.settings.llm.kv_type = kv_type
    ctx.settings.cache.reuse = "any-order"
    ctx.settings.cache.kv_budget_mb = args.budget_mb
    return ctx


def record_past(ctx: Services, questions: list[str]) -> None:
    """The past questions as the plan sees them: history rows with their prompt chunks."""
    pipe = ctx.answerer()
    for question in questions:
        row = pipe.history.add(question)
        hits = pipe.select(question, pipe.embedder.embed_batch([question])[0])
        pipe.history.retrieved(row, [h.chunk_id for h in hits])


def precompute(ctx: Services, minutes: float) -> dict[str, Any]:
    """Precompute for `minutes` of this process's CPU time (the machine is shared: wall time
    would give a cell less work when others load it), at most three times that in wall time."""
    deadline, kinds = time.time() + 3 * minutes * 60, {}
    cpu_end = time.process_time() + minutes * 60
    cpu = wall = 0.0

    def spent() -> bool:
        return time.process_time() >= cpu_end

    while time.time() < deadline and not spent():
        report = Precompute(ctx.precompute_parts(), settle_seconds=0).run(
            deadline=deadline, cancelled=spent
        )
        cpu, wall = cpu + report.cpu_seconds, wall + report.wall_seconds
        for kind, n in report.by_kind.items():
            kinds[kind] = kinds.get(kind, 0) + n
        log(report.summary())
        if report.jobs_done == 0 or report.stopped != "finished":
            break
    return {"cpu_seconds": cpu, "wall_seconds": wall, "jobs": kinds}


def served(ctx: Services, questions: list[str]) -> dict[str, Any]:
    """Of the future questions' prompt chunks, how many have a [system, chunk] node."""
    pipe = ctx.answerer()
    chunks = hits = 0
    for question in questions:
        retrieved = pipe.select(question, pipe.embedder.embed_batch([question])[0])
        chunks += len(retrieved)
        hits += sum(pipe.cache.kv_cached([h.record.text]) for h in retrieved)
    return {"chunks": chunks, "served": hits, "share": hits / chunks if chunks else None}


def run_cell(name: str, base: Path, root: Path, stream: Stream, args) -> dict[str, Any]:
    ctx = open_cell(name, base, root, args)
    record_past(ctx, stream.past)
    log(f"{name}: precomputing for {args.minutes} CPU-min")
    result = {"precompute": precompute(ctx, args.minutes)}
    result["kv_tree"] = ctx.kv.stats()
    result["revisit"] = served(ctx, stream.revisit)
    result["new"] = served(ctx, stream.new)
    both = result["revisit"]["served"] + result["new"]["served"]
    total = result["revisit"]["chunks"] + result["new"]["chunks"]
    result["all"] = {"chunks": total, "served": both, "share": both / total}
    shutil.rmtree(root / name)  # its KV blobs: hundreds of MB
    return result


def table(cells: dict[str, dict], sizes: dict, args) -> None:
    rows = []
    for name, c in cells.items():
        tree = c["kv_tree"]
        rows.append(
            [
                name,
                c["all"]["share"],
                c["revisit"]["share"],
                c["new"]["share"],
                tree["nodes_with_kv"],
                tree["bytes"] / 2**20,
                c["precompute"]["cpu_seconds"],
            ]
        )
    note = (
        f"mailbox {sizes['chunks']} chunks ({sizes['demo_chunks']} demo); KV budget "
        f"{args.budget_mb} MB; {args.minutes} CPU-min precompute per cell, any-order reuse"
    )
    columns = ["cell", "served", "revisit", "new", "nodes", "MiB", "CPU-s"]
    print_table("Prompt chunks served from the KV tree", columns, rows, note)


def main() -> None:
    args = parse_args()
    require_demo()
    stream = question_stream()
    root = Path(tempfile.mkdtemp(prefix="plan-"))
    try:
        base, sizes = build_mailbox(root, args.scale)
        cells = {}
        for name in args.cells.split(","):
            cells[name] = run_cell(name, base, root, stream, args)
            log(f"{name}: {cells[name]['all']}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    table(cells, sizes, args)
    counts = {k: len(v) for k, v in asdict(stream).items()}
    data = {"mailbox": sizes, "questions": counts, "cells": cells}
    path = write_results(args.out, data, vars(args))
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
