"""The pruned cross-encoder (GRATING) on TREC DL19 candidates with the test cross-encoder
(bench/train_cross_encoder.py): per-layer agreement of the provisional ([CLS] through the
classifier head) with the final ranking, the pruning threshold calibrated on half the queries,
then latency, peak memory and top-5 overlap against the unpruned cross-encoder. Each design runs
in its own process (its peak RSS is its own); a sampler records RSS over time for the plot.

    python bench/cross_pruned.py [--candidates 50] [--queries 43] [--model DIR]

Provisional scores: the classifier head on each layer's [CLS], or per-layer linear probes fitted
on the first half's pairs to the model's own final logits (no labels); the one that computes
fewer layers at the calibrated threshold is timed. Timed on the last --timed-queries queries.
Added memory: peak RSS (sampled) above the worker's RSS with torch, transformers and
sentence-transformers imported and no model loaded.

Designs: `cross` (sentence-transformers, the whole model, what `rerank = "cross"` runs);
`layer-wise unpruned` (grating.py at threshold inf: the same forward without pruning);
`cross-pruned` (the calibrated threshold, every layer resident) and `cross-pruned, streamed`
(no layer resident: the two-layer window, what cold start reads).
Writes bench/results/cross_pruned.json and cross_pruned_memory.png.
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"

# ruff: noqa: E402
import argparse
import json
import math
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import (
    CACHE_DIR,
    RESULTS_DIR,
    default_eval_dir,
    log,
    mean,
    plot_rss,
    print_table,
    rss_mib,
    write_results,
)
from pruning import calibrate, replay, top_k_overlap
from train_cross_encoder import DEFAULT_OUT

from assistant.rerank.policy import Pruner

GRID = (0.0, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0)
DESIGNS = {  # name → (threshold key, resident layers; None: all)
    "cross": ("whole", None),
    "layer-wise unpruned": ("inf", None),
    "cross-pruned": ("calibrated", None),
    "cross-pruned, streamed": ("calibrated", 0),
}


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    p.add_argument("--model", type=Path, default=DEFAULT_OUT)
    p.add_argument("--candidates", type=int, nargs="+", default=[50, 20])
    p.add_argument("--queries", type=int, default=43, help="judged DL19 queries")
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--target", type=float, default=0.98, help="top-k overlap to calibrate for")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--max-length", type=int, default=256)
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--depth", type=int, help=argparse.SUPPRESS)
    p.add_argument("--threshold", type=float, default=math.inf, help=argparse.SUPPRESS)
    p.add_argument("--probes", default="", help=argparse.SUPPRESS)
    p.add_argument("--timed-queries", type=int, default=12, help="the last N (held-out) queries")
    return p.parse_args()


# -- candidates: the fused top-N of each judged query, cached for the workers ----------------


def candidates_file(args: argparse.Namespace, depth: int) -> Path:
    path = CACHE_DIR / f"dl19-candidates-top{depth}-q{args.queries}.json"
    if not path.exists():
        from rerank_quality import load_queries

        rows = [
            {"qid": q.qid, "text": q.text, "pids": q.pids, "passages": q.passages}
            for q in load_queries(args.eval_dir, depth, args.queries)
        ]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(rows))
    return path


# -- one design, in its own process -----------------------------------------------------------


class Sampler(threading.Thread):
    def __init__(self, every: float = 0.01) -> None:
        super().__init__(daemon=True)
        self.every, self.start_t, self.timeline = every, time.perf_counter(), []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.timeline.append((time.perf_counter() - self.start_t, rss_mib()))
            time.sleep(self.every)


def worker(args: argparse.Namespace) -> dict[str, Any]:
    import sentence_transformers  # noqa: F401  (every design: the same libraries in the base)
    import torch
    import transformers  # noqa: F401

    from assistant.rerank.cross import CrossScorer
    from assistant.rerank.grating import CrossPruned
    from assistant.rerank.loader import return_freed_memory
    from assistant.rerank.probes import Probes

    torch.set_num_threads(args.threads)
    return_freed_memory()
    rows = json.loads(candidates_file(args, args.depth).read_text())[-args.timed_queries :]
    kind, resident = DESIGNS[args.worker]
    sampler = Sampler()
    sampler.start()
    base = rss_mib()  # torch, transformers and sentence-transformers imported, no model
    t0 = time.perf_counter()
    if kind == "whole":
        model = CrossScorer(str(args.model), args.max_length, args.threads)
    else:
        probes = Probes.load(Path(args.probes)) if args.probes and kind != "inf" else None
        model = CrossPruned(str(args.model), args.max_length, resident_layers=resident,
                            probes=probes)  # fmt: skip
    load_s = time.perf_counter() - t0
    latencies, orders, layers = [], [], []
    for n, row in enumerate(rows):
        t0 = time.perf_counter()
        if kind == "whole":
            scores = model.scores(row["text"], row["passages"])
            order = np.argsort(-scores, kind="stable").tolist()
            share = 1.0
        else:
            threshold = math.inf if kind == "inf" else args.threshold
            run = model.rank(row["text"], row["passages"], args.k, threshold)
            order = run.order
            share = run.candidate_layers / (len(row["passages"]) * model.arch.n_layers)
        latencies.append(time.perf_counter() - t0)
        orders.append(order)
        layers.append(share)
        if n == 0:
            first_s = load_s + latencies[0]  # cold start to the first ranked list
    sampler.stop.set()
    sampler.join()
    return {
        "load_s": load_s,
        "cold_start_s": first_s,
        "latency_s": latencies,
        "orders": orders,
        "layer_share": layers,
        "base_rss_mib": base,
        "peak_rss_mib": max(m for _, m in sampler.timeline),  # sampled every 10 ms
        "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "rss_timeline": sampler.timeline[:: max(1, len(sampler.timeline) // 400)],
    }


def run_worker(
    args: argparse.Namespace, design: str, depth: int, threshold: float, probes: str
) -> dict:
    log(f"{design}, {depth} candidates")
    cmd = [sys.executable, __file__, "--worker", design, "--depth", str(depth),
           "--threshold", str(threshold), "--model", str(args.model), "--threads",
           str(args.threads), "--queries", str(args.queries), "--k", str(args.k),
           "--max-length", str(args.max_length), "--timed-queries", str(args.timed_queries),
           "--probes", probes]  # fmt: skip
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().split("\n")[-1])


# -- where the ranking forms, and the threshold -----------------------------------------------


def states(args: argparse.Namespace, depth: int):
    """Per query: each layer's [CLS] of every candidate, and the final logits (one unpruned
    forward). Provisional scores from the head or from probes are computed from these."""
    import torch

    from assistant.rerank.grating import CrossPruned

    torch.set_num_threads(args.threads)
    engine = CrossPruned(str(args.model), args.max_length)
    rows = json.loads(candidates_file(args, depth).read_text())
    out = []
    for n, row in enumerate(rows, 1):
        cls, final = engine.layer_states(row["text"], row["passages"])
        out.append(([c.numpy() for c in cls], final.numpy()))
        if n % 10 == 0:
            log(f"layer states: {n}/{len(rows)}")
    return engine, out


def provisional(engine, recorded, probes=None) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per query: [layers, candidates] provisional logits and the final logits."""
    import torch

    out = []
    for cls, final in recorded:
        rows = []
        for layer, x in enumerate(cls):
            t = torch.from_numpy(x)
            score = probes.score(layer, t) if probes else engine.head(t[:, None, :])
            rows.append(score.numpy())
        out.append((np.array(rows), final))
    return out


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def agreement(traces, k: int) -> dict[int, dict[str, float]]:
    """Per layer (1-based): Spearman ρ of provisional with final, top-k overlap, and the share
    of the final top-k inside the provisional top-2k."""
    from scipy.stats import spearmanr

    out = {}
    for layer in range(len(traces[0][0])):
        rho, over, recall = [], [], []
        for rows, final in traces:
            ref = np.argsort(-final, kind="stable").tolist()
            prov = np.argsort(-rows[layer], kind="stable").tolist()
            rho.append(spearmanr(rows[layer], final)[0])
            over.append(top_k_overlap(prov, ref, k))
            recall.append(len(set(ref[:k]) & set(prov[: 2 * k])) / k)
        out[layer + 1] = {"spearman": mean(rho), f"top{k}_overlap": mean(over),
                          f"top{k}_in_top{2 * k}": mean(recall)}  # fmt: skip
    return out


def layer_share(trace: np.ndarray, k: int, threshold: float, checks: list[int], n: int) -> float:
    """The share of candidate-layer evaluations a pruned run computes (replayed)."""
    pruner, done = Pruner(trace.shape[1], k, threshold), 0
    last = 0
    for row, layer in zip(trace, checks, strict=True):
        done += len(pruner.active) * (layer + 1 - last)
        last = layer + 1
        pruner.step(row[pruner.active])
        if pruner.finished:
            return done / (trace.shape[1] * n)
    return (done + len(pruner.active) * (n - last)) / (trace.shape[1] * n)


def calibrated(traces, checks: list[int], k: int, target: float, n: int) -> dict[str, float]:
    """The threshold calibrated on the first half; its replayed overlap and layer share on the
    second."""
    half = len(traces) // 2
    replays = [(sigmoid(rows[checks]), sigmoid(final)) for rows, final in traces]
    threshold = calibrate(replays[:half], k, target, GRID)
    held = replays[half:]
    over = [
        top_k_overlap(replay(t, f, k, threshold), np.argsort(-f, kind="stable").tolist(), k)
        for t, f in held
    ]
    share = [layer_share(t, k, threshold, checks, n) for t, _ in held] if held else []
    return {"threshold": threshold, "held_out_overlap": mean(over), "layer_share": mean(share)}


def study(args, engine, recorded) -> tuple[dict[str, Any], Any]:
    """Head vs probes (fitted on the first half's pairs, unlabelled): agreement on the second
    half, calibration; returns the figures and the probes if they prune more."""
    from assistant.rerank.probes import fit

    half = len(recorded) // 2
    n_layers = engine.arch.n_layers
    checks = engine.default_checks()
    layers = range(n_layers - 1)
    probes = fit(
        {ly: np.concatenate([cls[ly] for cls, _ in recorded[:half]]) for ly in layers},
        np.concatenate([final for _, final in recorded[:half]]),
    )
    out = {}
    for name, p in (("head", None), ("probes", probes)):
        traces = provisional(engine, recorded, p)
        out[name] = {
            "layer_agreement_held_out": agreement(traces[half:], args.k),
            **calibrated(traces, checks, args.k, args.target, n_layers),
        }
    best = min(out, key=lambda m: (out[m]["layer_share"], m != "head"))
    return out | {"used": best}, probes if best == "probes" else None


# -- main -------------------------------------------------------------------------------------


def compare(args, depth: int, threshold: float, probes: str) -> dict[str, Any]:
    results = {d: run_worker(args, d, depth, threshold, probes) for d in DESIGNS}
    reference = results["cross"]["orders"]
    table = {}
    for name, res in results.items():
        over = [top_k_overlap(o, r, args.k) for o, r in zip(res["orders"], reference, strict=True)]
        table[name] = {
            "latency_mean_s": mean(res["latency_s"]),
            "latency_p95_s": float(np.percentile(res["latency_s"], 95)),
            "peak_rss_mib": res["peak_rss_mib"],
            "added_rss_mib": res["peak_rss_mib"] - res["base_rss_mib"],
            "process_max_rss_mib": res["max_rss_mib"],
            "cold_start_s": res["cold_start_s"],
            "layer_share": mean(res["layer_share"]),
            f"top{args.k}_overlap": mean(over),
        }
    return {"designs": table, "timelines": {n: r["rss_timeline"] for n, r in results.items()}}


def plot(timelines: dict[str, list], depth: int, path: Path) -> None:
    title = f"Cross-encoder reranking memory, DL19, {depth} candidates per query"
    plot_rss(timelines, "seconds since the worker started", title, path)


def main() -> None:
    args = parse_args()
    if args.worker:
        print(json.dumps(worker(args)))
        return
    depth = args.candidates[0]
    log(f"layer states on {depth} candidates")
    engine, recorded = states(args, depth)
    figures, probes = study(args, engine, recorded)
    probe_file = CACHE_DIR / "cross-probes.safetensors"
    if probes is not None:
        probes.save(probe_file)
    for name in ("head", "probes"):
        f = figures[name]
        print_table(
            f"Provisional ({name}) vs final ranking per layer, held-out half (DL19, {depth})",
            ["layer", "Spearman ρ", f"top-{args.k} overlap", f"top-{args.k} in top-{2 * args.k}"],
            [[layer, *v.values()] for layer, v in f["layer_agreement_held_out"].items()],
            note=f"threshold {f['threshold']} (calibrated on the first half): replayed "
            f"top-{args.k} overlap {f['held_out_overlap']:.3f}, layers computed "
            f"{f['layer_share']:.3f}",
            left=0,
        )
    threshold = figures[figures["used"]]["threshold"]
    use = str(probe_file) if probes is not None else ""
    runs = {d: compare(args, d, threshold, use) for d in args.candidates}
    for d, res in runs.items():
        cols = list(next(iter(res["designs"].values())))
        rows = [[name, *v.values()] for name, v in res["designs"].items()]
        print_table(f"DL19, {d} candidates, {args.threads} threads", ["design", *cols], rows)
    plot(runs[depth]["timelines"], depth, RESULTS_DIR / "cross_pruned_memory.png")
    data = {
        "model": str(args.model),
        "checks": [c + 1 for c in engine.default_checks()],
        "provisional": figures,
        "runs": {str(d): r["designs"] for d, r in runs.items()},
    }
    write_results("cross_pruned", data, {k: str(v) for k, v in vars(args).items()})


if __name__ == "__main__":
    main()
