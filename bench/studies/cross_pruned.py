"""The pruned cross-encoder (GRATING) on TREC DL19 candidates with the test cross-encoder
(bench/studies/train_cross_encoder.py): per-layer agreement of the provisional ([CLS] through the
classifier head) with the final ranking, the pruning threshold calibrated on half the queries,
then latency, peak memory and top-5 overlap against the unpruned cross-encoder. Each design runs
in its own process (its peak RSS is its own); a sampler records RSS over time for the plot.

    python bench/studies/cross_pruned.py [--candidates 20 50] [--queries 43] [--rounds 2]
        [--model DIR] [--threads 2] [--designs NAME ...] [--name cross_pruned]

Provisional scores: the classifier head on each layer's [CLS], or per-layer linear probes fitted
on the first half's pairs to the model's own final logits (no labels); the one that computes
fewer layers at the calibrated threshold is timed. Timed on the last --timed-queries queries.
Added memory: peak RSS (sampled) above the worker's RSS with torch, transformers and
sentence-transformers imported, the forward's torch kernels run once on small random tensors
(their code pages are the libraries', not the model's) and no model loaded. The study also
replays a rank-cut schedule (keep the provisional top m after each check, m calibrated).

Designs: `cross` (sentence-transformers, the whole model in float32, what `rerank = "cross"`
runs); `layer-wise unpruned` (grating.py at threshold inf: the same forward without pruning,
float32); `layer-wise int8 unpruned` and `layer-wise bf16 unpruned` (the layers' matrices in int8
or bfloat16: what each costs in top-5 overlap and saves in time); `cross-pruned` (what
`rerank = "cross-pruned"` runs here: bfloat16, the calibrated threshold, every layer resident),
`cross-pruned, loaded as it runs` (the same resident bytes, but each layer read as the first
forward reaches it: WRX's cold start at the same budget) and `cross-pruned, streamed` (no layer
resident: the two-layer window): padded batches of 4 pairs. The `cross-packed` designs are the
same with the packed forward (packed.py: no padding, attention per pair, the last layer on
[CLS] only; `[reranker] cross_packed_rows`, what `rerank = "cross-pruned"` runs now), unpruned
(threshold inf) and pruned, resident, loaded as it runs, streamed. All layer-wise designs share
the product code (bf16.py's row blocks, the fused query-key-value matrix), so the padded rows
are the earlier design with today's kernels. `wrx` in the results: each "loaded as it runs"
cold start over its preloaded twin's (the same resident bytes). The study's layer states come
from the packed bfloat16 engine where the CPU multiplies bfloat16 natively (the threshold is
calibrated for what runs).
Runs with OMP_WAIT_POLICY=PASSIVE: on 2 cores shared with other work, torch's OpenMP
threads spin-waiting for a descheduled sibling made a 2-thread forward ~8x slower than 1 thread.
Writes bench/results/cross_pruned.json and cross_pruned_memory.png.
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch loads its OpenMP (see above)

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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

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
from cross_study import states, study
from pruning import top_k_overlap
from train_cross_encoder import DEFAULT_OUT

from assistant.rerank.bert import native_bf16

PACKED_ROWS = 1024  # the packed designs' group size ([reranker] cross_packed_rows)
DESIGNS = {  # name → threshold key, resident layers (None: all), matrices, preload, packed rows
    "cross": ("whole", None, "float32", True, 0),
    "layer-wise unpruned": ("inf", None, "float32", True, 0),
    "layer-wise int8 unpruned": ("inf", None, "int8", True, 0),
    "layer-wise bf16 unpruned": ("inf", None, "bfloat16", True, 0),
    "cross-pruned": ("calibrated", None, "bfloat16", True, 0),
    "cross-pruned, loaded as it runs": ("calibrated", None, "bfloat16", False, 0),
    "cross-pruned, streamed": ("calibrated", 0, "bfloat16", True, 0),
    "cross-packed unpruned": ("inf", None, "bfloat16", True, PACKED_ROWS),
    "cross-packed": ("calibrated", None, "bfloat16", True, PACKED_ROWS),
    "cross-packed, loaded as it runs": ("calibrated", None, "bfloat16", False, PACKED_ROWS),
    "cross-packed, streamed": ("calibrated", 0, "bfloat16", True, PACKED_ROWS),
}
LOADED_AS_IT_RUNS = {  # WRX: each lazy design and its preloaded twin
    "cross-pruned, loaded as it runs": "cross-pruned",
    "cross-packed, loaded as it runs": "cross-packed",
}


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    p.add_argument("--model", type=Path, default=DEFAULT_OUT)
    p.add_argument(
        "--candidates", type=int, nargs="+", default=[20, 50], help="the first calibrates"
    )
    p.add_argument("--queries", type=int, default=43, help="judged DL19 queries")
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--target", type=float, default=0.98, help="top-k overlap to calibrate for")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--max-length", type=int, default=256)
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--depth", type=int, help=argparse.SUPPRESS)
    p.add_argument("--threshold", type=float, default=math.inf, help=argparse.SUPPRESS)
    p.add_argument("--probes", default="", help=argparse.SUPPRESS)
    p.add_argument("--timed-queries", type=int, default=10, help="the last N (held-out) queries")
    p.add_argument("--rounds", type=int, default=2, help="runs of every design, order reversed")
    p.add_argument("--study-only", action="store_true", help="agreement and calibration only")
    p.add_argument("--designs", nargs="+", choices=list(DESIGNS), help="a subset (cross always)")
    p.add_argument("--name", default="cross_pruned", help="results/NAME.json, NAME_memory.png")
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


def warm_kernels() -> None:
    """Run each torch op the forwards use once on small random tensors, so the kernels' code
    pages (faulted in on first use, counted in RSS) are in every design's base, not in its
    added memory."""
    import torch
    import torch.nn.functional as F

    x, w = torch.randn(2, 16, 384), torch.randn(384, 384)
    q = F.linear(x, w).view(2, 16, 12, 32).transpose(1, 2)
    mask = torch.ones(2, 1, 1, 16, dtype=torch.bool)
    a = F.scaled_dot_product_attention(q, q, q, attn_mask=mask)
    a = F.scaled_dot_product_attention(q, q, q, attn_mask=mask.float())
    y = F.layer_norm(a.transpose(1, 2).reshape(2, 16, 384), (384,))
    torch.tanh(F.gelu(y) + F.embedding(torch.tensor([[1, 2]]), w)[0, 0])


def worker(args: argparse.Namespace) -> dict[str, Any]:
    import sentence_transformers  # noqa: F401  (every design: the same libraries in the base)
    import torch
    import transformers  # noqa: F401

    from assistant.rerank.cross import CrossScorer
    from assistant.rerank.grating import CrossPruned
    from assistant.rerank.probes import Probes
    from bench.ql.loader import return_freed_memory

    torch.set_num_threads(args.threads)
    return_freed_memory()
    warm_kernels()
    rows = json.loads(candidates_file(args, args.depth).read_text())[-args.timed_queries :]
    kind, resident, matrices, preload, packed_rows = DESIGNS[args.worker]
    sampler = Sampler()
    sampler.start()
    base = rss_mib()  # torch, transformers and sentence-transformers imported, no model
    t0 = time.perf_counter()
    if kind == "whole":
        model = CrossScorer(str(args.model), args.max_length, args.threads)
    else:
        probes = Probes.load(Path(args.probes)) if args.probes and kind != "inf" else None
        model = CrossPruned(str(args.model), args.max_length, resident_layers=resident,
                            probes=probes, bf16=matrices == "bfloat16",
                            int8=matrices == "int8", preload=preload,
                            packed_rows=packed_rows)  # fmt: skip
    load_s = time.perf_counter() - t0
    latencies, cpu, orders, layers = [], [], [], []
    for n, row in enumerate(rows):
        c0, t0 = time.process_time(), time.perf_counter()
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
        cpu.append(time.process_time() - c0)
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
        "cpu_s": cpu,
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


# -- main -------------------------------------------------------------------------------------


def rounds(args, depth: int, threshold: float, probes: str) -> dict[str, dict]:
    """Every design `--rounds` times, the order reversed each round (the load on a shared
    machine drifts); per design the rounds' queries pooled, cold starts averaged."""
    names = ["cross", *(d for d in args.designs or DESIGNS if d != "cross")]
    runs: dict[str, list[dict]] = {d: [] for d in names}
    for r in range(args.rounds):
        for d in names[:: -1 if r % 2 else 1]:
            runs[d].append(run_worker(args, d, depth, threshold, probes))
    out = {}
    for d, rs in runs.items():
        out[d] = {key: sum((x[key] for x in rs), []) for key in ("latency_s", "cpu_s", "orders",
                                                                 "layer_share")}  # fmt: skip
        out[d] |= {key: mean([x[key] for x in rs]) for key in ("load_s", "cold_start_s")}
        out[d] |= {key: max(x[key] for x in rs) for key in ("peak_rss_mib", "max_rss_mib")}
        out[d]["base_rss_mib"] = mean([x["base_rss_mib"] for x in rs])
        out[d]["rss_timeline"] = rs[0]["rss_timeline"]
    return out


def compare(args, depth: int, threshold: float, probes: str) -> dict[str, Any]:
    results = rounds(args, depth, threshold, probes)
    reference = results["cross"]["orders"]
    table = {}
    for name, res in results.items():
        over = [top_k_overlap(o, r, args.k) for o, r in zip(res["orders"], reference, strict=True)]
        table[name] = {
            "latency_mean_s": mean(res["latency_s"]),
            "latency_p95_s": float(np.percentile(res["latency_s"], 95)),
            "cpu_mean_s": mean(res["cpu_s"]),
            "peak_rss_mib": res["peak_rss_mib"],
            "added_rss_mib": res["peak_rss_mib"] - res["base_rss_mib"],
            "process_max_rss_mib": res["max_rss_mib"],
            "load_s": res["load_s"],
            "cold_start_s": res["cold_start_s"],
            "layer_share": mean(res["layer_share"]),
            f"top{args.k}_overlap": mean(over),
        }
    cross = table["cross"]
    for row in table.values():
        row["vs_cross"] = {key: row[key] / cross[key] for key in ("latency_mean_s", "cpu_mean_s",
                           "added_rss_mib", "cold_start_s")}  # fmt: skip
    wrx = {
        lazy: table[lazy]["cold_start_s"] / table[twin]["cold_start_s"]
        for lazy, twin in LOADED_AS_IT_RUNS.items()
        if lazy in table and twin in table
    }
    timelines = {n: r["rss_timeline"] for n, r in results.items()}
    return {"designs": table, "wrx_cold_start_vs_preloaded": wrx, "timelines": timelines}


PLOTTED = (  # the memory plot's lines (all eleven are in the JSON; more repeat colours)
    "cross", "layer-wise unpruned", "cross-pruned", "cross-pruned, streamed", "cross-packed",
    "cross-packed, loaded as it runs", "cross-packed, streamed",
)  # fmt: skip


def plot(timelines: dict[str, list], depth: int, path: Path) -> None:
    title = f"Cross-encoder reranking memory, DL19, {depth} candidates per query"
    shown = {n: t for n, t in timelines.items() if n in PLOTTED}
    plot_rss(shown, "seconds since the worker started", title, path)


def main() -> None:
    args = parse_args()
    if args.worker:
        print(json.dumps(worker(args)))
        return
    depth = args.candidates[0]
    log(f"layer states on {depth} candidates")
    engine, recorded = states(args, json.loads(candidates_file(args, depth).read_text()))
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
            f"{f['layer_share']:.3f}; rank cut keeping {f['rank_cut']['keep']}: overlap "
            f"{f['rank_cut']['held_out_overlap']:.3f}, layers {f['rank_cut']['layer_share']:.3f}",
            left=0,
        )
    if args.study_only:
        print(json.dumps(figures, indent=1))
        return
    threshold = figures[figures["used"]]["threshold"]
    use = str(probe_file) if probes is not None else ""
    runs = {d: compare(args, d, threshold, use) for d in args.candidates}
    for d, res in runs.items():
        table = {
            n: {c: x for c, x in v.items() if c != "vs_cross"} for n, v in res["designs"].items()
        }
        cols = list(next(iter(table.values())))
        rows = [[name, *v.values()] for name, v in table.items()]
        print_table(f"DL19, {d} candidates, {args.threads} threads", ["design", *cols], rows)
        ratios = [[name, *v["vs_cross"].values()] for name, v in res["designs"].items()]
        cols = list(res["designs"]["cross"]["vs_cross"])
        print_table(f"DL19, {d} candidates: each design / cross", ["design", *cols], ratios)
        print(f"cold start loaded as it runs / preloaded: {res['wrx_cold_start_vs_preloaded']}")
    plot(runs[depth]["timelines"], depth, RESULTS_DIR / f"{args.name}_memory.png")
    data = {
        "model": str(args.model),
        "native_bf16": native_bf16(),
        "checks": [c + 1 for c in engine.default_checks()],
        "provisional": figures,
        "runs": {str(d): r["designs"] for d, r in runs.items()},
        "wrx_cold_start_vs_preloaded": {
            str(d): r["wrx_cold_start_vs_preloaded"] for d, r in runs.items()
        },
    }
    write_results(args.name, data, {k: str(v) for k, v in vars(args).items()})


if __name__ == "__main__":
    main()
