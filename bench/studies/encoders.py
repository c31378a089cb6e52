"""Encoders side by side: torch (sentence-transformers), ONNX float, ONNX int8 weights.

    python bench/studies/encoders.py [--backends torch,onnx,onnx-int8] [--quick | --no-dl19]
                                     [--out NAME]

For each: the demo import's embedding rate (chunks/s), demo recall@10 (of the top 10 chunks, and
of the top 10 distinct chunks, duplicates merged as the prompt's selection merges them: what
tests/assistant/knowledge/test_demo_retrieval.py asserts), the same distinct recall on the 46
holdout questions (data/qa/evidence_holdout.jsonl, which no setting was tuned on) and the
questions each encoder misses, DL19 nDCG@10 (dense and the app's hybrid), and the cosine of its
chunk vectors to torch's (or the first backend's). Writes bench/results/encoders.json (or --out).
"""

from __future__ import annotations

import os
import sys

os.environ["HF_HUB_OFFLINE"] = "1"

# ruff: noqa: E402
import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

from _common import (
    QA,
    REPO,
    default_eval_dir,
    import_demo,
    load_qa,
    log,
    print_table,
    write_results,
)
from retrieval import bench_dl19, bench_qa, is_source

from assistant.config_sections import EmbeddingSettings
from assistant.home import open_home
from assistant.knowledge.db import open_db
from assistant.knowledge.distinct import SPARE, distinct_hits
from assistant.knowledge.embeddings import make_embedder
from assistant.knowledge.retrieval import Retriever
from assistant.knowledge.store import KnowledgeStore

HYBRID = "hybrid (zscore, default)"
HOLDOUT = REPO / "data" / "qa" / "evidence_holdout.jsonl"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="torch,onnx,onnx-int8")
    parser.add_argument("--quick", action="store_true", help="DL19 on the first 10 queries only")
    parser.add_argument("--no-dl19", action="store_true", help="the demo figures only")
    parser.add_argument("--out", default="encoders", help="results file name (no .json)")
    parser.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    return parser.parse_args()


def bench_backend(backend: str, tmp: Path, args: argparse.Namespace) -> dict[str, Any]:
    t0 = time.perf_counter()
    embedder = make_embedder(EmbeddingSettings(backend=backend))
    embedder.embed_batch(["warm up"])
    load_seconds = time.perf_counter() - t0
    home = open_home(tmp / backend)
    store = KnowledgeStore(open_db(home.knowledge_db))
    log(f"{backend}: importing the demo corpus")
    report = import_demo(store, embedder)
    ids, texts = store.chunk_texts()
    tokens = store.stats()["chunk_tokens"] / max(1, len(texts))
    retriever = Retriever(store, embedder, None)
    qa = bench_qa(store, retriever, load_qa())
    dl19 = None if args.no_dl19 else bench_dl19(embedder, args.eval_dir, args.quick)
    return {
        "embedder": embedder.name,
        "load_seconds": load_seconds,
        "chunks": report.embedded,
        "chunk_tokens_mean": tokens,
        "embed_seconds": report.embed_seconds,
        "chunks_per_second": report.embedded / report.embed_seconds,
        "loadavg_1min": os.getloadavg()[0],
        "demo_recall@10": {m: qa["modes"][m]["recall@10_all"] for m in ("dense", "hybrid")},
        "demo_recall@10_distinct": distinct_recall(retriever, load_qa()),
        "holdout_recall@10_distinct": distinct_recall(retriever, load_qa([HOLDOUT])),
        "hybrid_misses": {
            "demo": hybrid_misses(retriever, load_qa()),
            "holdout": hybrid_misses(retriever, load_qa([HOLDOUT])),
        },
        "dl19_ndcg@10": {m: dl19["modes"][m]["ndcg@10"] for m in ("dense", HYBRID)} if dl19 else {},
        "dl19_embed_passages_per_second": dl19["embed_passages_per_second"] if dl19 else None,
        "_vectors": store.embedding_matrix(embedder.name)[1],
    }


def found(retriever: Retriever, q: QA, mode: str) -> bool:
    """Whether q's source is among the 10 distinct chunks of `mode`."""
    top = distinct_hits(retriever.search(q.question, 10 + SPARE, mode), 10, retriever)
    return any(is_source(h.record, q) for h in top)


def distinct_recall(retriever: Retriever, items: list[QA]) -> dict[str, float]:
    """Share of questions whose source is among the 10 distinct chunks of each mode."""
    modes = ("bm25", "dense", "hybrid")
    return {mode: sum(found(retriever, q, mode) for q in items) / len(items) for mode in modes}


def hybrid_misses(retriever: Retriever, items: list[QA]) -> list[str]:
    """The questions whose source is not among the 10 distinct hybrid chunks."""
    return [q.question for q in items if not found(retriever, q, "hybrid")]


def main() -> None:
    args = parse_args()
    runs: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-encoders-") as tmp:
        for backend in args.backends.split(","):
            runs[backend] = bench_backend(backend, Path(tmp), args)
    reference = runs.get("torch", next(iter(runs.values())))["_vectors"]
    for run in runs.values():
        cosines = (run.pop("_vectors") * reference).sum(1)
        run["cosine_to_torch"] = {"mean": float(cosines.mean()), "min": float(cosines.min())}
    columns = ["encoder", "chunks/s", "x torch", "demo R@10 dense", "hybrid", "distinct hybrid"]
    columns += ["holdout distinct hybrid", "DL19 nDCG dense", "hybrid", "cos min"]
    base = runs.get("torch", {}).get("chunks_per_second", np.nan)
    rows = [
        (
            f"{b} ({r['embedder']})",
            r["chunks_per_second"],
            r["chunks_per_second"] / base,
            r["demo_recall@10"]["dense"],
            r["demo_recall@10"]["hybrid"],
            r["demo_recall@10_distinct"]["hybrid"],
            r["holdout_recall@10_distinct"]["hybrid"],
            r["dl19_ndcg@10"].get("dense", np.nan),
            r["dl19_ndcg@10"].get(HYBRID, np.nan),
            r["cosine_to_torch"]["min"],
        )
        for b, r in runs.items()
    ]
    note = (
        "embedding rate of the demo import (392 chunks), run one after another on a shared machine"
    )
    print_table("Encoders", columns, rows, note)
    print(f"wrote {write_results(args.out, runs, vars(args))}")


if __name__ == "__main__":
    main()
