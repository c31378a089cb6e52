"""Why the cross-encoder took ~10 s for 20 candidates on a 2-core machine shared with other work:
torch's OpenMP threads, waiting at each parallel region's barrier for a sibling the OS has
descheduled, spin (OMP_WAIT_POLICY=ACTIVE, libgomp's default spin count) and burn the time slice
the sibling needs. Times the layer-wise cross-encoder (grating.py, float32, unpruned) on DL19
candidates with each wait policy and thread count, each in its own process (the policy is read
when the OpenMP runtime loads), side by side, with the load average it ran under.

    python bench/studies/omp_wait.py [--queries 4] [--candidates 20]
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"

# ruff: noqa: E402
import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

from _common import CACHE_DIR, log, mean, print_table, write_results
from train_cross_encoder import DEFAULT_OUT

RUNS = [("ACTIVE", 2), ("PASSIVE", 2), ("ACTIVE", 1), ("PASSIVE", 1)]


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", type=Path, default=DEFAULT_OUT)
    p.add_argument("--candidates", type=int, default=20)
    p.add_argument("--queries", type=int, default=4, help="the last N DL19 queries")
    p.add_argument("--rounds", type=int, default=2, help="runs of every setting, order reversed")
    p.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    return p.parse_args()


def worker(args: argparse.Namespace) -> dict[str, float]:
    import torch

    from assistant.rerank.grating import CrossPruned

    torch.set_num_threads(args.worker)
    path = CACHE_DIR / f"dl19-candidates-top{args.candidates}-q43.json"
    if not path.exists():
        sys.exit(f"{path}: missing; run bench/studies/cross_pruned.py first (it writes them)")
    rows = json.loads(path.read_text())[-args.queries :]
    engine = CrossPruned(str(args.model), 256)
    engine.rank(rows[0]["text"], rows[0]["passages"], 5)  # warm
    wall, cpu = [], []
    for row in rows:
        c0, t0 = time.process_time(), time.perf_counter()
        engine.rank(row["text"], row["passages"], 5)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return {"wall_s": mean(wall), "cpu_s": mean(cpu), "loadavg_1m": os.getloadavg()[0]}


def main() -> None:
    args = parse_args()
    if args.worker:
        print(json.dumps(worker(args)))
        return
    results: dict[str, list[dict]] = {}
    for r in range(args.rounds):
        for policy, threads in RUNS[:: -1 if r % 2 else 1]:
            name = f"{policy}, {threads} thread{'s' if threads > 1 else ''}"
            log(name)
            cmd = [sys.executable, __file__, "--worker", str(threads), "--model",
                   str(args.model), "--candidates", str(args.candidates), "--queries",
                   str(args.queries)]  # fmt: skip
            env = os.environ | {"OMP_WAIT_POLICY": policy}
            out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
            results.setdefault(name, []).append(json.loads(out.strip().split("\n")[-1]))
    table = {n: {k: mean([x[k] for x in rs]) for k in rs[0]} for n, rs in results.items()}
    print_table(
        f"Layer-wise cross-encoder, DL19 {args.candidates} candidates, s a question",
        ["OpenMP wait, threads", "wall", "CPU", "load average"],
        [[n, *v.values()] for n, v in table.items()],
    )
    write_results("omp_wait", {"runs": table}, {k: str(v) for k, v in vars(args).items()})


if __name__ == "__main__":
    main()
