"""A night's pace on a real mailbox: precompute for `--minutes` on a copy of a home, with the
model on its default threads or on the physical cores other processes leave free (what a night
uses while the user is away: `all`; `all-load`, the rule before llm/cores.py: every physical
core while the load average is under two), and report nodes per hour, what the night did and
the coverage of the last six weeks it reached, with the projected coverage of an 8-hour night at
that pace.

    python bench/night_rate.py --home /work/eval/home --minutes 3 --threads default,all
    python bench/night_rate.py --home /work/eval/home --minutes 5 --threads all-load,all --out X
    python bench/night_rate.py --home H --minutes 5 --threads all --writer qwen2.5-coder-1.5b

Each cell copies the home (the original is never written). Writes bench/results/night_rate.json.
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"

# ruff: noqa: E402
import argparse
import shutil
import tempfile
import time
from pathlib import Path

from _common import log, print_table, write_results

from assistant.llm.model_file import physical_cores
from assistant.precompute.runner import AWAY_SECONDS, Precompute
from assistant.services import open_services


def cell(base: Path, root: Path, threads: str, minutes: float, writer: str = "") -> dict:
    home = root / f"home-{threads}"
    shutil.copytree(base, home)
    ctx = open_services(home)
    ctx.settings.models.writer = writer
    runner = Precompute(ctx.precompute_parts(), settle_seconds=0)
    if threads == "default":  # the user counts as present: the runner keeps the default threads
        ctx.presence.touch()
        keep_present = lambda: ctx.presence.touch() or False  # noqa: E731
    else:
        keep_present = lambda: False  # noqa: E731
    llm = runner.cache.llm
    if threads == "all-load":  # the rule before llm/cores.py: the load average under two
        llm.cores.others = lambda: None
    picked: dict[str, int] = {}  # threads chosen before each job: how often
    use = llm.use_threads

    def tally(n):
        key = str(n or llm.default_threads)
        picked[key] = picked.get(key, 0) + 1
        use(n)

    llm.use_threads = tally
    # the model's own evaluation (prefill, and decode where a job writes), timed around
    # LocalLLM.eval: the share of the night the model computes, the rest being the night's
    # own work (planning, saving nodes, line vectors, the queue)
    in_model = [0.0]
    evaluate = llm.eval

    def timed_eval(*a, **k):
        start = time.perf_counter()
        try:
            return evaluate(*a, **k)
        finally:
            in_model[0] += time.perf_counter() - start

    llm.eval = timed_eval
    log(f"{threads}: precompute {minutes} min")
    report = runner.run(deadline=time.time() + minutes * 60, cancelled=keep_present)
    nodes = report.by_kind.get("chunk_kv", 0)
    plan = runner.planner.coverage()
    recent = len(plan.recent_chunks)
    per_hour = nodes / (report.wall_seconds / 3600) if report.wall_seconds else 0.0
    return {
        "threads": threads, "n_threads": physical_cores() if threads != "default" else None,
        "model": llm.name,
        "threads_picked": picked,
        "wall_s": report.wall_seconds, "by_kind": report.by_kind, "nodes": nodes,
        "model_eval_s": in_model[0],
        "model_share": in_model[0] / report.wall_seconds if report.wall_seconds else None,
        "nodes_per_hour": per_hour, "coverage": runner.planner.covered(),
        "recent_chunks": recent, "projected_8h": min(1.0, 8 * per_hour / recent) if recent else 0,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--threads", default="default,all")
    parser.add_argument("--writer", default="", help="[models] writer (issue 47: the night at "
                        "1.5B, qwen2.5-coder-1.5b)")  # fmt: skip
    parser.add_argument("--out", default="night_rate")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="night-rate-") as tmp:
        cells = [cell(args.home, Path(tmp), t, args.minutes, args.writer)
                 for t in args.threads.split(",")]  # fmt: skip
    rows = [
        [c["threads"], f"{c['wall_s'] / 60:.1f}", c["nodes"], f"{c['nodes_per_hour']:.0f}",
         f"{c['model_share']:.0%}", c["coverage"], f"{c['projected_8h']:.0%}",
         c["threads_picked"]]
        for c in cells
    ]  # fmt: skip
    print_table(
        "A night's pace",
        ["threads", "min", "nodes", "nodes/h", "in the model", "reached", "8 h projected",
         "picked"], rows,
        note=f"'all' = {physical_cores()} physical cores, while away (AWAY_SECONDS={AWAY_SECONDS})",
    )  # fmt: skip
    write_results(args.out, {"cells": cells}, vars(args) | {"home": str(args.home)})


if __name__ == "__main__":
    main()
