"""Reranking speed and memory, side by side in one run: full QL on llama.cpp without and with
document KV; torch QL unpruned, pruned, pruned + document KV, and pruned + document KV with the
WRX planner's resident layers (cold start). Each configuration runs in its own process, so peak
RSS is its own; a sampler thread records RSS over time for the plot.

    python bench/studies/rerank_speed.py [--model gemma-3-270m] [--queries 2] [--candidates 20]

Writes bench/results/rerank_speed.json and rerank_memory.png (another model: _MODEL suffixes).
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"

# ruff: noqa: E402
import argparse
import json
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

from _common import (
    RESULTS_DIR,
    default_eval_dir,
    log,
    plot_rss,
    print_table,
    rss_mib,
    write_results,
)
from elastic import LayerCosts, plan_resident, predicted_latency
from pruning import calibrate, top_k_overlap

from assistant.config import Settings
from cache.blobs import BlobStore
from cache.db import open_cache_db

MODELS_DIR = Path("/tmp/bench-cache/models")
DEFAULT_MODEL = Settings().reranker.model
CONFIGS = ("full", "full + doc KV", "torch full", "pruned", "pruned + doc KV", "WRX cold start")
GRID = [0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0]


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default=DEFAULT_MODEL)
    p.add_argument("--queries", type=int, default=2)
    p.add_argument("--candidates", type=int, default=20)
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--target", type=float, default=0.98, help="top-k precision for calibration")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--work-dir", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--threshold", type=float, default=float("inf"), help=argparse.SUPPRESS)
    p.add_argument("--resident", type=int, default=0, help=argparse.SUPPRESS)
    return p.parse_args()


# -- one configuration, in its own process ----------------------------------------------------


class RssSampler:
    def __init__(self, every: float = 0.05) -> None:
        self.every, self.t0, self.samples = every, time.perf_counter(), []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append((time.perf_counter() - self.t0, rss_mib()))
            time.sleep(self.every)

    def mark(self) -> float:
        return time.perf_counter() - self.t0

    def stop(self) -> list[tuple[float, float]]:
        self._stop.set()
        self._thread.join()
        return self.samples


def peak_rss_mib() -> float:
    """VmHWM: this process's peak RSS (ru_maxrss would carry the parent's peak across exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def settings_for(args: argparse.Namespace) -> Settings:
    s = Settings()
    s.reranker.model, s.reranker.n_threads = args.model, 1
    s.reranker.candidates = args.candidates
    return s


def worker(args: argparse.Namespace) -> dict[str, Any]:
    sampler = RssSampler()
    queries = json.loads((args.work_dir / "queries.json").read_text())
    engine = "llama" if args.worker.startswith("full") else "torch"
    db = open_cache_db(args.work_dir / f"blobs-{engine}.db")  # pruned + doc KV and WRX share
    blobs = BlobStore(db, args.work_dir / "blobs", {"doc_kv": 8 << 30})
    doc_kv = "doc KV" in args.worker or "WRX" in args.worker
    import_framework(engine)
    base_rss = rss_mib()  # the runtime is loaded, the model not yet
    load_start = sampler.mark()
    rank, precompute = make_ranker(args, blobs if doc_kv else None)
    loaded = sampler.mark()
    if doc_kv:  # untimed: idle time's job in the app
        for q in queries:
            precompute(q["passages"])
    runs = []
    for q in queries:
        start = sampler.mark()
        order, extra = rank(q["text"], q["passages"])
        runs.append({"order": order, "seconds": sampler.mark() - start, **extra})
    return {
        "load_seconds": loaded - load_start,
        "runs": runs,
        "peak_rss_mib": peak_rss_mib(),
        "base_rss_mib": base_rss,
        "rss_timeline": sampler.stop(),
    }


def import_framework(engine: str) -> None:
    """The engine's runtime, imported before the baseline RSS is read: what reranking adds to
    a process that has it already (the app has torch loaded for its embedder)."""
    if engine == "torch":
        import torch  # noqa: F401
    else:
        import llama_cpp  # noqa: F401


def make_ranker(args: argparse.Namespace, blobs: BlobStore | None):
    settings = settings_for(args)
    if args.worker.startswith("full"):
        return _llama_ranker(settings, blobs)
    from bench.ql.loader import make_torch_ql

    engine = make_torch_ql(settings, MODELS_DIR, blobs, resident_layers=args.resident)

    def rank(text: str, passages: list[str]):
        run = engine.rank(text, passages, args.k, args.threshold)
        trace = [[None if np.isnan(v) else v for v in row] for row in run.trace]
        extra = {"trace": trace, "candidate_layers": run.candidate_layers}
        extra["final"] = [run.scores.get(i) for i in range(len(passages))]
        return run.order, extra

    return rank, engine.precompute


def _llama_ranker(settings: Settings, blobs: BlobStore | None):
    from assistant.llm.runtime import LocalLLM
    from assistant.rerank.doc_kv import DocKV
    from assistant.rerank.models import resolve_model
    from assistant.rerank.prompt import get_prompt
    from assistant.rerank.scorer import QLScorer

    llm = LocalLLM(resolve_model(settings.reranker.model, MODELS_DIR), n_ctx=2048, n_threads=1)
    doc_kv = DocKV(blobs, llm.fingerprint) if blobs is not None else None
    scorer = QLScorer(llm, get_prompt(settings.reranker.prompt), doc_kv)

    def rank(text: str, passages: list[str]):
        scores = scorer.scores(text, passages, use_doc_kv=doc_kv is not None)
        return sorted(range(len(scores)), key=lambda i: (-scores[i], i)), {}

    return rank, lambda passages: scorer.precompute(passages)


# -- the driver -------------------------------------------------------------------------------


def run_worker(args: argparse.Namespace, config: str, work: Path, **extra) -> dict[str, Any]:
    log(f"{config}: running")
    cmd = [sys.executable, __file__, "--worker", config, "--work-dir", str(work)]
    cmd += ["--model", args.model, "--k", str(args.k)]
    cmd += [f"--{k}={v}" for k, v in extra.items()]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode:
        raise RuntimeError(f"{config} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().split("\n")[-1])


def write_queries(args: argparse.Namespace, work: Path) -> None:
    from rerank_quality import load_queries

    queries = load_queries(default_eval_dir(), args.candidates, args.queries)
    rows = [{"qid": q.qid, "text": q.text, "passages": q.passages} for q in queries]
    (work / "queries.json").write_text(json.dumps(rows))


def layer_costs(args: argparse.Namespace, torch_full: dict) -> LayerCosts:
    from assistant.rerank.models import resolve_model
    from bench.ql.loader import torch_weights

    weights = torch_weights(resolve_model(args.model, MODELS_DIR), MODELS_DIR)
    n = weights.arch.n_layers
    t0 = time.perf_counter()
    for i in range(n):
        weights.layer(i)
    load_s = (time.perf_counter() - t0) / n
    compute_s = float(np.mean([r["seconds"] for r in torch_full["runs"]])) / n
    return LayerCosts(n, weights.layer_bytes(0), load_s, compute_s)


def summarise(results: dict[str, dict], k: int) -> dict[str, Any]:
    ref = results["torch full"]["runs"]
    llama = results["full"]["runs"]
    table = {}
    for name, res in results.items():
        runs = res["runs"]
        seconds = float(np.mean([r["seconds"] for r in runs]))
        n = len(runs[0]["order"])
        table[name] = {
            "latency_s": seconds,
            "candidates_per_s": n / seconds,
            "peak_rss_mib": res["peak_rss_mib"],
            "model_rss_mib": res["peak_rss_mib"] - res["base_rss_mib"],
            "load_s": res["load_seconds"],
            **{f"overlap@{j} vs torch full": overlap(runs, ref, j) for j in (1, 3, 5)},
            **{f"overlap@{j} vs full": overlap(runs, llama, j) for j in (1, 3, 5)},
        }
    return table


def overlap(runs: list[dict], reference: list[dict], k: int) -> float:
    pairs = zip(runs, reference, strict=True)
    return float(np.mean([top_k_overlap(r["order"], f["order"], k) for r, f in pairs]))


def plot(results: dict[str, dict], path: Path) -> None:
    title = "Reranker memory over time (each configuration in its own process)"
    timelines = {name: res["rss_timeline"] for name, res in results.items()}
    plot_rss(timelines, "seconds since process start", title, path)


def main() -> None:
    args = parse_args()
    if args.worker:
        print(json.dumps(worker(args)))
        return
    with tempfile.TemporaryDirectory(prefix="bench-rerank-speed-") as tmp:
        work = Path(tmp)
        write_queries(args, work)
        results = {c: run_worker(args, c, work) for c in ("full", "full + doc KV", "torch full")}
        traces = [(np.array(r["trace"], float), np.array(r["final"], float))
                  for r in results["torch full"]["runs"]]  # fmt: skip
        threshold = calibrate(traces, args.k, args.target, GRID)
        log(f"calibrated threshold for top-{args.k} precision {args.target}: {threshold}")
        for config in ("pruned", "pruned + doc KV"):
            results[config] = run_worker(args, config, work, threshold=threshold)
        costs = layer_costs(args, results["torch full"])
        budget = costs.n_layers * costs.layer_bytes // 2
        target = 0.8 * predicted_latency(costs, 0)
        resident = plan_resident(costs, target, budget)
        results["WRX cold start"] = run_worker(
            args, "WRX cold start", work, threshold=threshold, resident=resident
        )
    table = summarise(results, args.k)
    wrx = {"costs": costs.__dict__, "target_s": target, "budget_bytes": budget}
    wrx |= {"resident_layers": resident, "predicted_s": predicted_latency(costs, resident)}
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    suffix = "" if args.model == DEFAULT_MODEL else f"_{args.model}"
    plot(results, RESULTS_DIR / f"rerank_memory{suffix}.png")
    print_speed(table, threshold, wrx, args)
    out = {"threshold": threshold, "configs": table, "wrx": wrx, "raw": slim(results)}
    print(f"wrote {write_results('rerank_speed' + suffix, out, vars(args))}")


def slim(results: dict[str, dict]) -> dict[str, dict]:
    """For the JSON: orders and times per query, RSS every 0.5 s (the plot has every sample)."""
    keep = ("order", "seconds", "candidate_layers")
    return {
        name: {
            **{k: v for k, v in res.items() if k not in ("runs", "rss_timeline")},
            "runs": [{k: r[k] for k in keep if k in r} for r in res["runs"]],
            "rss_timeline": res["rss_timeline"][::10],
        }
        for name, res in results.items()
    }


def print_speed(table: dict, threshold: float, wrx: dict, args: argparse.Namespace) -> None:
    keys = ("latency_s", "candidates_per_s", "peak_rss_mib", "model_rss_mib", "load_s")
    keys += ("overlap@1 vs torch full", "overlap@3 vs torch full", "overlap@5 vs torch full")
    keys += ("overlap@5 vs full",)
    rows = [(name, *(r[k] for k in keys)) for name, r in table.items()]
    columns = ["configuration", "latency s", "cand/s", "peak RSS MiB", "model MiB", "load s"]
    columns += ["ovl@1 torch", "ovl@3 torch", "ovl@5 torch", "ovl@5 llama"]
    note = (
        f"{args.queries} DL19 queries × {args.candidates} hybrid candidates, model {args.model}, "
        "one thread each; model MiB: peak RSS above the process with its runtime (torch or "
        f"llama_cpp) imported and no model loaded; pruned threshold {threshold} calibrated for "
        f"top-{args.k} precision "
        f"{args.target} on these same queries; document KV precomputed before timing (idle "
        f"work); WRX: {wrx['resident_layers']} resident layers planned for "
        f"{wrx['target_s']:.1f} s within {wrx['budget_bytes'] / 2**20:.0f} MiB"
    )
    print_table("Reranking speed and memory", columns, rows, note)


if __name__ == "__main__":
    main()
