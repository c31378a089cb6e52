"""Reranking quality on TREC DL19: nDCG@10 and precision@k of the fused (hybrid) order, of
query-likelihood (QL) reranking per model and prompt, QL interpolated with the fused score, and
pruned QL (torch, layer-wise) at a low and a high dispersion threshold.

    python bench/studies/rerank_quality.py [--candidates 20] [--models gemma-3-270m smollm2-135m]
                                   [--prompts upr short] [--queries N] [--pruned-queries N]

Token log-probs are kept per (model, prompt, query, passage) in /tmp/bench-cache, so a stopped
run resumes. Tuned knobs (interpolation weight, passage-length term) are fitted on the first
half of the judged queries and reported on the second half only.
Writes bench/results/rerank_quality.json.
"""

from __future__ import annotations

import os
import sys

os.environ["HF_HUB_OFFLINE"] = "1"

# ruff: noqa: E402
import argparse
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

from _common import (
    CACHE_DIR,
    default_eval_dir,
    load_dl19,
    log,
    mean,
    ndcg_at_k,
    print_table,
    write_results,
)
from _synthetic import BulkDoc, bulk_insert, put_vectors
from pruning import calibrate, replay
from retrieval import dl19_vectors

from assistant.config_sections import EmbeddingSettings, RetrievalSettings
from assistant.knowledge.db import open_db
from assistant.knowledge.embeddings import make_embedder
from assistant.knowledge.retrieval import Retriever, zscore
from assistant.knowledge.store import KnowledgeStore
from assistant.llm.runtime import LocalLLM
from assistant.rerank.doc_kv import DocKV
from assistant.rerank.models import resolve_model
from assistant.rerank.policy import Pruner
from assistant.rerank.prompt import PROMPTS
from assistant.rerank.scorer import QLScorer
from bench.ql.loader import torch_weights
from bench.ql.pruned import default_checks
from cache.blobs import BlobStore
from cache.db import open_cache_db

MODELS_DIR = CACHE_DIR / "models"
PRUNE_THRESHOLDS = (0.05, 0.2)  # low: prunes early and often; high: only clear spreads
CALIBRATION_GRID = (0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0)  # + a row calibrated on it
WEIGHTS = [round(w, 2) for w in np.linspace(0.0, 1.0, 21)]
LENGTH_TERMS = [round(g, 2) for g in np.linspace(-1.0, 1.0, 21)]


@dataclass(frozen=True)
class Query:
    qid: str
    text: str
    pids: list[str]
    fused: np.ndarray  # the retriever's fused scores, best first
    passages: list[str]
    grades: dict[str, int]


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    p.add_argument("--candidates", type=int, nargs="+", default=[20])
    p.add_argument("--models", nargs="+", default=["gemma-3-270m", "smollm2-135m"])
    p.add_argument("--prompts", nargs="+", default=["upr", "short"])
    p.add_argument("--queries", type=int, default=0, help="first N judged queries (0: all)")
    p.add_argument("--threads", type=int, default=1, help="llama.cpp threads (shared CPU: 1)")
    p.add_argument("--pruned-queries", type=int, default=0, help="queries for pruned QL")
    p.add_argument("--collect-only", action="store_true", help="score, write no results")
    p.add_argument("--pruned-model", default="smollm2-135m", help="the model pruned QL runs on")
    p.add_argument("--out", default="rerank_quality", help="bench/results/OUT.json")
    return p.parse_args()


def load_queries(eval_dir: Path, depth: int, limit: int) -> list[Query]:
    data = load_dl19(eval_dir)
    embedder = make_embedder(EmbeddingSettings())
    store = KnowledgeStore(open_db(None))
    ids = bulk_insert(store, [BulkDoc(f"dl19:{pid}", "", [text]) for pid, text in data.passages])
    put_vectors(store, embedder.name, ids, dl19_vectors(embedder, data)[0])
    pid_of = dict(zip(ids.tolist(), (pid for pid, _ in data.passages), strict=True))
    text_of = dict(data.passages)
    retriever = Retriever(store, embedder, None, RetrievalSettings(candidates=max(depth, 50)))
    judged = [(qid, text) for qid, text in data.queries if qid in data.qrels]
    out = []
    for qid, text in judged[: limit or None]:
        ranked = retriever.rank(text, "hybrid")[0]
        pids = [pid_of[i] for i in ranked.ids[:depth].tolist()]
        passages = [text_of[p] for p in pids]
        out.append(Query(qid, text, pids, ranked.scores[:depth], passages, data.qrels[qid]))
    return out


# -- collecting token log-probs (resumable) ---------------------------------------------------


def collect(model: str, prompts: Sequence[str], queries: list[Query], threads: int) -> dict:
    """(prompt, qid, pid) → question-token log-probs; the passage KV is computed once per
    candidate and restored for each further prompt (the reranker's doc-KV path)."""
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    path = CACHE_DIR / f"rerank-ql-{model}.jsonl"
    done = _read_cache(path)
    todo = [
        (q, i)
        for q in queries
        for i in range(len(q.pids))
        if any((pr, q.qid, q.pids[i]) not in done for pr in prompts)
    ]
    if todo:
        log(f"{model}: scoring {len(todo)} candidates × {len(prompts)} prompts")
        _score_into(path, done, model, prompts, todo, threads)
    return done


def _read_cache(path: Path) -> dict:
    done: dict = {}
    if path.exists():
        for line in path.read_text().split("\n"):
            if line.strip():
                row = json.loads(line)
                done[(row["prompt"], row["qid"], row["pid"])] = np.array(row["lp"])
    return done


def _score_into(path, done, model, prompts, todo, threads) -> None:
    llm = LocalLLM(resolve_model(model, MODELS_DIR), n_ctx=1024, n_threads=threads)
    blobs_dir = CACHE_DIR / f"doc-kv-{model}"
    blobs = BlobStore(open_cache_db(None), blobs_dir, {"doc_kv": 2 << 30})
    scorer = QLScorer(llm, PROMPTS[prompts[0]], DocKV(blobs, llm.fingerprint))
    with path.open("a") as fh:
        for n, (q, i) in enumerate(todo, 1):
            for name in prompts:
                lp = scorer.query_logprobs(q.passages[i], q.text, PROMPTS[name].instruction)
                done[(name, q.qid, q.pids[i])] = lp
                row = {"prompt": name, "qid": q.qid, "pid": q.pids[i], "lp": lp.tolist()}
                fh.write(json.dumps(row) + "\n")
            fh.flush()
            blobs.delete(scorer.doc_kv.key(scorer.tokens.prefix(q.passages[i])))  # keep /tmp small
            if n % 20 == 0:
                log(f"{model}: {n}/{len(todo)}")


# -- pruned QL: provisional scores recorded once, the policy replayed per threshold -----------


def collect_traces(model: str, queries: list[Query], depth: int) -> dict[str, Trace]:
    """qid → provisional scores at every layer but the last, and the final scores, of the
    unpruned torch forward. Candidates are independent in the batch, so a pruned run's order is
    a replay of these (at the check layers), and they show where the ranking forms."""
    path = CACHE_DIR / f"rerank-trace-{model}-top{depth}-layers.jsonl"
    done = {}
    if path.exists():
        rows = [json.loads(line) for line in path.read_text().split("\n") if line.strip()]
        done = {r["qid"]: _trace(r) for r in rows}
    todo = [q for q in queries if q.qid not in done]
    if todo:
        from assistant.config import Settings
        from bench.ql.loader import make_torch_ql

        settings = Settings()
        settings.reranker.model, settings.reranker.n_threads = model, 1
        engine = make_torch_ql(settings, MODELS_DIR, None)
        every = list(range(engine.arch.n_layers - 1))
        with path.open("a") as fh:
            for n, q in enumerate(todo, 1):
                log(f"{model} torch traces: {n}/{len(todo)}")
                run = engine.rank(q.text, q.passages, 10, checks=every)
                final = [run.scores[i] for i in range(len(q.pids))]
                trace = [[None if np.isnan(v) else v for v in row] for row in run.trace[:-1]]
                row = {"qid": q.qid, "layers": run.check_layers[:-1], "trace": trace}
                fh.write(json.dumps(row | {"final": final}) + "\n")
                done[q.qid] = _trace(row | {"final": final})
    return done


@dataclass(frozen=True)
class Trace:
    layers: list[int]  # the layer after which each row was scored
    rows: np.ndarray  # [layers, candidates] provisional scores
    final: np.ndarray

    def at(self, layers: Sequence[int]) -> np.ndarray:
        """The rows recorded after `layers` (the pruner's check layers)."""
        return self.rows[[self.layers.index(layer) for layer in layers]]


def _trace(row: dict) -> Trace:
    return Trace(row["layers"], np.array(row["trace"], float), np.array(row["final"], float))


def layer_agreement(subset: list[Query], traces: dict[str, Trace], k: int = 5) -> dict:
    """Per layer: how far the provisional (final norm + LM head) scores already rank like the
    final ones: mean Spearman ρ, and the share of the final top-k inside the provisional 2k."""
    from scipy.stats import spearmanr

    out = {}
    for index, layer in enumerate(traces[subset[0].qid].layers):
        rho, recall = [], []
        for q in subset:
            t = traces[q.qid]
            rho.append(spearmanr(t.rows[index], t.final)[0])
            top = set(np.argsort(-t.final)[:k].tolist())
            recall.append(len(top & set(np.argsort(-t.rows[index])[: 2 * k].tolist())) / k)
        out[layer + 1] = {"spearman": mean(rho), f"top{k}_in_top{2 * k}": mean(recall)}
    return out


def pruned_rows(queries: list[Query], traces: dict, model: str) -> dict[str, Any]:
    subset = [q for q in queries if q.qid in traces]
    rows: dict[str, Any] = {"no rerank (hybrid z-score)": evaluate(subset, fused)}

    def final(q: Query) -> np.ndarray:
        return traces[q.qid].final

    rows[f"QL {model} torch, unpruned"] = evaluate(subset, final) | {"layers": 1.0}
    n_layers = torch_weights(resolve_model(model, MODELS_DIR), MODELS_DIR).arch.n_layers
    checks = default_checks(n_layers)
    replays = {q.qid: (traces[q.qid].at(checks), traces[q.qid].final) for q in subset}
    calibrated = calibrate(list(replays.values()), 5, 0.98, CALIBRATION_GRID)
    for threshold in (*PRUNE_THRESHOLDS, calibrated):
        for k in (5, 10):
            layers = [layer_share(*replays[q.qid], k, threshold, n_layers) for q in subset]
            rows[f"pruned QL, threshold {threshold}, k={k}"] = evaluate(
                subset, replayed(replays, threshold, k)
            ) | {"layers": float(np.mean(layers))}
    return {
        "queries": len(subset),
        "calibrated_threshold": calibrated,
        "rows": rows,
        "layer_agreement": layer_agreement(subset, traces),
    }


def layer_share(trace, final, k: int, threshold: float, n_layers: int) -> float:
    """The share of candidate-layer evaluations a pruned run computes (1.0: none saved)."""
    pruner, done = Pruner(len(final), k, threshold), {}
    for layer, row in zip(default_checks(n_layers), trace, strict=False):
        before = set(pruner.active)
        pruner.step(row[pruner.active])
        done |= dict.fromkeys(before - set(pruner.active), layer + 1)
        if pruner.finished:
            done |= dict.fromkeys(pruner.active, layer + 1)
            break
    total = sum(done.get(i, n_layers) for i in range(len(final)))
    return total / (len(final) * n_layers)


def replayed(traces: dict, threshold: float, k: int) -> Scores:
    """Scores that sort like the pruned run's order."""

    def scores(q: Query) -> np.ndarray:
        trace, final = traces[q.qid]
        order = replay(trace, final, k, threshold)
        out = np.empty(len(order))
        out[order] = -np.arange(len(order), dtype=float)
        return out

    return scores


# -- metrics ----------------------------------------------------------------------------------


def precision_at(ranked: Sequence[str], grades: dict[str, int], k: int) -> float:
    return sum(grades.get(p, 0) >= 2 for p in ranked[:k]) / k


def metrics(order: Sequence[str], grades: dict[str, int]) -> dict[str, float]:
    return {
        "ndcg@10": ndcg_at_k(order, grades, 10),
        "p@1": precision_at(order, grades, 1),
        "p@3": precision_at(order, grades, 3),
        "p@5": precision_at(order, grades, 5),
    }


Scores = Callable[[Query], np.ndarray]


def evaluate(queries: list[Query], scores: Scores) -> dict[str, float]:
    runs = []
    for q in queries:
        s = scores(q)
        order = [q.pids[i] for i in sorted(range(len(s)), key=lambda i: (-s[i], i))]
        runs.append(metrics(order, q.grades))
    return {k: mean(r[k] for r in runs) for k in runs[0]}


def ql(lp: dict, prompt: str, reduce: str = "mean") -> Scores:
    fn = np.mean if reduce == "mean" else np.sum
    return lambda q: np.array([fn(lp[(prompt, q.qid, p)]) for p in q.pids])


def interpolated(base: Scores, weight: float) -> Scores:
    """(1 − w)·z(QL) + w·z(fused), z over the query's candidates."""
    return lambda q: (1 - weight) * zscore(base(q)) + weight * zscore(q.fused.astype(float))


def length_term(base: Scores, gamma: float) -> Scores:
    """QL + γ·log(passage words): a passage-length prior (γ < 0 penalises long passages)."""
    return lambda q: base(q) + gamma * np.log([len(p.split()) + 1 for p in q.passages])


def tune(dev: list[Query], make: Callable[[float], Scores], grid: Sequence[float]) -> float:
    """The grid value with the best mean nDCG@10 on `dev` (ties: the first)."""
    best = max(grid, key=lambda v: (evaluate(dev, make(v))["ndcg@10"], -grid.index(v)))
    return float(best)


def fused(q: Query) -> np.ndarray:
    return q.fused.astype(float)


def quality_rows(queries: list[Query], lp_by_model: dict, prompts: Sequence[str]) -> dict:
    half = len(queries) // 2
    dev, test = queries[:half], queries[half:]
    rows: dict[str, Any] = {"no rerank (hybrid z-score)": _both(queries, test, fused)}
    for model, lp in lp_by_model.items():
        for prompt in prompts:
            base = ql(lp, prompt)
            rows[f"QL {model} {prompt}"] = _both(queries, test, base)
            rows[f"QL {model} {prompt} (sum)"] = _both(queries, test, ql(lp, prompt, "sum"))
            w = tune(dev, lambda v, b=base: interpolated(b, v), WEIGHTS)
            rows[f"QL {model} {prompt} + fused (w={w})"] = _both(
                queries, test, interpolated(base, w), tuned=w
            )
            g = tune(dev, lambda v, b=base: length_term(b, v), LENGTH_TERMS)
            rows[f"QL {model} {prompt} + length (γ={g})"] = _both(
                queries, test, length_term(base, g), tuned=g
            )
    return {"dev_queries": len(dev), "test_queries": len(test), "rows": rows}


def _both(queries: list[Query], test: list[Query], scores: Scores, tuned=None) -> dict:
    return {"all": evaluate(queries, scores), "test": evaluate(test, scores), "tuned": tuned}


def print_quality(title: str, result: dict) -> None:
    keys = ("ndcg@10", "p@1", "p@3", "p@5")
    rows = [
        (
            name,
            *(r["all"][k] if r["tuned"] is None else math.nan for k in keys),
            *(r["test"][k] for k in keys),
        )
        for name, r in result["rows"].items()
    ]
    columns = ["ranking", *(f"{k} all" for k in keys), *(f"{k} test" for k in keys)]
    note = (
        f"test = the last {result['test_queries']} judged queries; w (interpolation weight) and "
        f"γ (length term) tuned on the first {result['dev_queries']}, so their 'all' is blank. "
        "p@k: grade ≥ 2 relevant. mean and sum of the question's log-probs rank alike (one "
        "question, the same tokens for every candidate)"
    )
    print_table(title, columns, rows, note)


def print_pruned(result: dict, depth: int) -> None:
    keys = ("ndcg@10", "p@1", "p@3", "p@5", "layers")
    rows = [(name, *(r.get(k) for k in keys)) for name, r in result["rows"].items()]
    note = (
        "layers: share of candidate-layer evaluations computed. Pruned orders replay the "
        "policy on provisional scores recorded at the check layers of "
        "the unpruned torch forward (exact: candidates are independent in the batch)"
    )
    title = f"Pruned QL, hybrid top-{depth} (first {result['queries']} judged queries)"
    note += (
        f"; threshold {result['calibrated_threshold']}: the lowest on the grid whose top-5 "
        "agrees with the unpruned top-5 at ≥ 0.98 on these same queries (in-sample)"
    )
    print_table(title, ["ranking", *keys], rows, note)
    agreement = [
        (layer, a["spearman"], a["top5_in_top10"]) for layer, a in result["layer_agreement"].items()
    ]
    print_table(
        f"Where the ranking forms (hybrid top-{depth}): provisional vs final scores per layer",
        ["after layer", "Spearman ρ", "final top-5 in provisional top-10"],
        agreement,
        "provisional: final norm + LM head on that layer's hidden states (the pruner's score)",
    )


def main() -> None:
    args = parse_args()
    results: dict[str, Any] = {}
    for depth in args.candidates:
        queries = load_queries(args.eval_dir, depth, args.queries)
        lp = {m: collect(m, args.prompts, queries, args.threads) for m in args.models}
        if args.collect_only:
            continue
        result = quality_rows(queries, lp, args.prompts)
        result["queries"] = len(queries)
        results[f"top{depth}"] = result
        print_quality(f"DL19 reranking, hybrid top-{depth} ({len(queries)} queries)", result)
        if args.pruned_queries:
            model = args.pruned_model
            traces = collect_traces(model, queries[: args.pruned_queries], depth)
            result["pruned"] = pruned_rows(queries, traces, model)
            print_pruned(result["pruned"], depth)
    if not args.collect_only:
        print(f"wrote {write_results(args.out, results, vars(args))}")


if __name__ == "__main__":
    main()
