"""One torch thread or two for the cross-encoder rerankers on this machine: `cross`
(sentence-transformers) and `cross-packed` (what `rerank = "cross-pruned"` runs) on DL19
candidates, each design and thread count in its own process (bench/studies/cross_pruned.py's worker:
the same latency, CPU and added-memory figures), OpenMP waiting passively, rounds in reversed
order, with the load average each ran under. A 2-core machine shared with other work is where
a second intra-op thread may cost more than it gives.

    python bench/studies/cross_threads.py [--threads 1 2] [--rounds 2] [--timed-queries 10]

Needs bench/studies/cross_pruned.py run first (its candidates and calibrated threshold).
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# ruff: noqa: E402
import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

from _common import RESULTS_DIR, log, mean, print_table, write_results
from train_cross_encoder import DEFAULT_OUT

DESIGNS = ("cross", "cross-packed")
WORKER = Path(__file__).with_name("cross_pruned.py")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", type=Path, default=DEFAULT_OUT)
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--candidates", type=int, default=20)
    p.add_argument("--timed-queries", type=int, default=10)
    p.add_argument("--rounds", type=int, default=2)
    return p.parse_args()


def run(args: argparse.Namespace, design: str, threads: int, threshold: float) -> dict:
    cmd = [sys.executable, str(WORKER), "--worker", design, "--depth", str(args.candidates),
           "--threshold", str(threshold), "--model", str(args.model), "--threads", str(threads),
           "--timed-queries", str(args.timed_queries)]  # fmt: skip
    out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
                     .strip().split("\n")[-1])  # fmt: skip
    out["loadavg_1m"] = os.getloadavg()[0]
    return out


def main() -> None:
    args = parse_args()
    calibrated = json.loads((RESULTS_DIR / "cross_pruned.json").read_text())["provisional"]
    threshold = calibrated[calibrated["used"]]["threshold"]
    settings = [(d, t) for d in DESIGNS for t in args.threads]
    runs: dict[tuple[str, int], list[dict]] = {s: [] for s in settings}
    for r in range(args.rounds):
        for design, threads in settings[:: -1 if r % 2 else 1]:
            log(f"{design}, {threads} thread(s)")
            runs[design, threads].append(run(args, design, threads, threshold))
    table = {}
    for (design, threads), rs in runs.items():
        table[f"{design}, {threads} thread(s)"] = {
            "latency_mean_s": mean([x for r in rs for x in r["latency_s"]]),
            "cpu_mean_s": mean([x for r in rs for x in r["cpu_s"]]),
            "added_rss_mib": max(r["peak_rss_mib"] - r["base_rss_mib"] for r in rs),
            "loadavg_1m": mean([r["loadavg_1m"] for r in rs]),
        }
    for t in args.threads:  # each design at t threads against cross at the same t
        cross = table[f"cross, {t} thread(s)"]
        for d in DESIGNS:
            row = table[f"{d}, {t} thread(s)"]
            row["latency_vs_cross"] = row["latency_mean_s"] / cross["latency_mean_s"]
            row["memory_vs_cross"] = row["added_rss_mib"] / cross["added_rss_mib"]
    cols = list(next(iter(table.values())))
    print_table(
        f"DL19, {args.candidates} candidates, OpenMP passive: threads side by side",
        ["design, threads", *cols],
        [[n, *v.values()] for n, v in table.items()],
    )
    data = {"threshold": threshold, "cpus": os.cpu_count(), "runs": table}
    write_results("cross_threads", data, {k: str(v) for k, v in vars(args).items()})


if __name__ == "__main__":
    main()
