"""Retrieval: demo QA recall, latency at demo and synthetic scale, nDCG@10 on TREC DL19.

    python bench/retrieval.py [--chunks N] [--queries N] [--quick] [--eval-dir DIR]

Writes bench/results/retrieval.json.
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # never reach for the hub, even before the model loads

# ruff: noqa: E402
import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from _common import (
    CACHE_DIR,
    DL19,
    QA,
    REPO,
    default_eval_dir,
    file_digest,
    import_demo,
    load_dl19,
    load_qa,
    log,
    mean,
    ndcg_at_k,
    percentile,
    print_table,
    recall_at_k,
    require_demo,
    rss_mib,
    timed,
    write_results,
)
from _synthetic import BulkDoc, bulk_insert, put_vectors, synthetic_docs, unit_vectors

from assistant.config_sections import EmbeddingSettings, RetrievalSettings
from assistant.home import open_home
from assistant.knowledge.bm25 import BM25Index
from assistant.knowledge.db import open_db
from assistant.knowledge.embeddings import SentenceTransformerEmbedder, make_embedder
from assistant.knowledge.retrieval import DenseIndex, Hit, Mode, Retriever
from assistant.knowledge.store import ChunkRecord, KnowledgeStore

Embedder = SentenceTransformerEmbedder
MODES: tuple[Mode, ...] = ("bm25", "dense", "hybrid")
KINDS = ("all", "email", "note")
APP = RetrievalSettings(top_k=10, candidates=50)
DEEP = RetrievalSettings(top_k=100, candidates=100)  # for recall@100 on DL19 only
# (label, mode, fusion): the app's default fusion, and RRF beside it for comparison
DL19_VARIANTS = (
    ("bm25", "bm25", APP.fusion),
    ("dense", "dense", APP.fusion),
    (f"hybrid ({APP.fusion}, default)", "hybrid", APP.fusion),
    (f"hybrid (rrf, k={APP.rrf_k})", "hybrid", "rrf"),
)
NAN = float("nan")
PAUSE = 0.15  # seconds before each timed query


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000, help="synthetic store size")
    parser.add_argument("--queries", type=int, default=50, help="latency queries per mode")
    parser.add_argument("--quick", action="store_true", help="DL19 on the first 10 queries only")
    parser.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    parser.add_argument("--measure-load", type=Path, help=argparse.SUPPRESS)  # child process
    return parser.parse_args()


# -- 1. demo QA -------------------------------------------------------------------------------


def is_source(record: ChunkRecord, qa: QA) -> bool:
    if qa.kind == "email":
        return record.message_id == qa.source
    note = (REPO / "data" / qa.source).resolve()
    return bool(record.note_path) and Path(record.note_path) == note


def first_rank(ids: list[int], records: dict[int, ChunkRecord], qa: QA) -> int | None:
    return next((r for r, i in enumerate(ids, 1) if is_source(records[i], qa)), None)


def answer_found(qa: QA, hits: list[Hit]) -> float:
    """1.0 if every must_contain string is in some top-10 chunk (the text an LLM would see)."""
    text = "\n".join(h.record.text for h in hits).lower()
    return float(all(s.lower() in text for s in qa.must_contain)) if qa.must_contain else NAN


def bench_qa(store: KnowledgeStore, retriever: Retriever, items: list[QA]) -> dict[str, Any]:
    records = {r.chunk_id: r for r in store.chunk_records(store.chunk_texts()[0].tolist())}
    modes: dict[str, Any] = {}
    for mode in MODES:
        hits = {q: retriever.search(q.question, 10, mode) for q in items}
        ranks = [(q, first_rank([h.chunk_id for h in hits[q]], records, q)) for q in items]
        found = {k: [float(r is not None) for q, r in ranks if k in ("all", q.kind)] for k in KINDS}
        modes[mode] = {f"recall@10_{k}": mean(v) for k, v in found.items()}
        modes[mode]["mrr@10"] = mean(1 / r if r else 0.0 for _, r in ranks)
        modes[mode]["answers"] = [answer_found(q, hits[q]) for q in items]
        modes[mode]["answer@10"] = mean(modes[mode]["answers"])
        modes[mode]["ranks"] = [r for _, r in ranks]
    hybrid = zip(items, modes["hybrid"]["ranks"], modes["hybrid"]["answers"], strict=True)
    misses = [
        miss_detail(retriever, records, q) | {"answer@10": a} for q, r, a in hybrid if r is None
    ]
    return {"questions": len(items), "modes": modes, "hybrid_misses": misses}


def miss_detail(retriever: Retriever, records: dict[int, ChunkRecord], qa: QA) -> dict[str, Any]:
    fused, bm25, dense = retriever.rank(qa.question, "hybrid")
    return {
        "question": qa.question,
        "kind": qa.kind,
        "source": qa.source,
        "bm25_rank": first_rank(bm25.ids.tolist(), records, qa) if bm25 else None,
        "dense_rank": first_rank(dense.ids.tolist(), records, qa) if dense else None,
        "hybrid_rank": first_rank(fused.ids.tolist(), records, qa),
        "hybrid_top_title": records[int(fused.ids[0])].title if len(fused.ids) else "",
    }


# -- 2. build, start-up, latency --------------------------------------------------------------


def build_and_load(
    store: KnowledgeStore, embedder: Embedder, index_dir: Path
) -> tuple[Retriever, dict[str, Any]]:
    builder = Retriever(store, embedder, index_dir, APP)
    _, bm25_build = timed(builder.bm25_index)
    _, dense_build = timed(builder.dense_index)
    del builder
    retriever = Retriever(store, embedder, index_dir, APP)  # a new one: loads the saved files
    _, bm25_load = timed(retriever.bm25_index)
    _, dense_load = timed(retriever.dense_index)
    return retriever, {
        "chunks": store.stats()["chunks"],
        "bm25_build_seconds": bm25_build,
        "dense_build_seconds": dense_build,
        "bm25_load_seconds": bm25_load,
        "dense_load_seconds": dense_load,
        "index_files_mib": sum(p.stat().st_size for p in index_dir.glob("*.npz")) / 2**20,
        "rss_mib_after_load": rss_mib(),
        "fresh_process": fresh_process_load(index_dir),
    }


def fresh_process_load(index_dir: Path) -> dict[str, float]:
    """Start-up as the app sees it: a new process loading the saved index files."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--measure-load", str(index_dir)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"index load in a new process failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().split("\n")[-1])


def measure_load(index_dir: Path) -> dict[str, float]:
    before = rss_mib()
    files = [p for p in index_dir.glob("*.npz") if not p.name.endswith(".tmp.npz")]
    bm25_file, dense_file = (
        next(p for p in files if p.name.startswith(k)) for k in ("bm25", "dense")
    )
    _, bm25_seconds = timed(partial(BM25Index.load, bm25_file))
    _, dense_seconds = timed(partial(DenseIndex.load, dense_file))
    after = rss_mib()
    return {
        "load_seconds": bm25_seconds + dense_seconds,
        "rss_mib": after,
        "rss_mib_added": after - before,
    }


def query_latency(retriever: Retriever, embedder: Embedder, queries: list[str]) -> dict[str, Any]:
    """p50/p90 of search(k=10) per mode, modes interleaved per query so that noise from other
    processes hits all alike. A pause before each call, as between a user's questions: right
    after a matrix product numpy's BLAS threads still spin (~0.1 s) and would slow torch."""
    retriever.search(queries[0], 10, "hybrid")  # warm caches
    steps: dict[str, Callable[[str], object]] = {"embed query": lambda q: embedder.embed_batch([q])}
    steps |= {mode: partial(retriever.search, k=10, mode=mode) for mode in MODES}
    times: dict[str, list[float]] = {what: [] for what in steps}
    for query in queries:
        for what, step in steps.items():
            time.sleep(PAUSE)
            times[what].append(timed(partial(step, query))[1])
    stats = {
        w: {"p50_ms": percentile(t, 50) * 1e3, "p90_ms": percentile(t, 90) * 1e3}
        for w, t in times.items()
    }
    return {**stats, "loadavg_1min": os.getloadavg()[0]}


def bench_synthetic(
    embedder: Embedder, root: Path, texts: list[str], n: int, queries: list[str]
) -> dict[str, Any]:
    home = open_home(root)
    store = KnowledgeStore(open_db(home.knowledge_db))
    log(f"synthetic store: generating and inserting {n:,} chunks")
    ids, insert_seconds = timed(partial(bulk_insert, store, synthetic_docs(texts, n), "email"))
    vectors = unit_vectors(len(ids), np.random.default_rng(7))
    _, vector_seconds = timed(partial(put_vectors, store, embedder.name, ids, vectors))
    del vectors
    log("synthetic store: building and loading the indexes")
    retriever, build = build_and_load(store, embedder, home.index_dir)
    log("synthetic store: query latency")
    extra = {"insert_seconds": insert_seconds, "put_embeddings_seconds": vector_seconds}
    return {**build, **extra, "latency": query_latency(retriever, embedder, queries)}


# -- 3. DL19 ----------------------------------------------------------------------------------


def dl19_vectors(embedder: Embedder, data: DL19) -> tuple[np.ndarray, float]:
    """Passage vectors, cached in /tmp/bench-cache by corpus hash (seconds is 0.0 if cached)."""
    model = re.sub(r"[^A-Za-z0-9_.-]", "_", embedder.name)
    path = CACHE_DIR / f"dl19-{file_digest(data.corpus_file)}-{model}.npy"
    if path.exists() and (cached := np.load(path)).shape[0] == len(data.passages):
        return cached, 0.0
    texts = [text for _, text in data.passages]
    parts, seconds = [], 0.0
    for start in range(0, len(texts), 500):
        log(f"DL19: embedding passages {start:,}–{min(start + 500, len(texts)):,}")
        vectors, took = timed(partial(embedder.embed_batch, texts[start : start + 500]))
        parts.append(vectors)
        seconds += took
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    np.save(path, np.concatenate(parts))
    return np.concatenate(parts), seconds


def bench_dl19(embedder: Embedder, eval_dir: Path, quick: bool) -> dict[str, Any]:
    data = load_dl19(eval_dir)
    store = KnowledgeStore(open_db(None))
    ids = bulk_insert(store, [BulkDoc(f"dl19:{pid}", "", [text]) for pid, text in data.passages])
    passage_of = dict(zip(ids.tolist(), (pid for pid, _ in data.passages), strict=True))
    vectors, embed_seconds = dl19_vectors(embedder, data)
    put_vectors(store, embedder.name, ids, vectors)
    queries = data.queries[:10] if quick else data.queries
    judged = [(qid, text) for qid, text in queries if qid in data.qrels]
    modes: dict[str, Any] = {}
    for label, mode, fusion in DL19_VARIANTS:
        log(f"DL19: {label}")
        app, deep = (
            Retriever(store, embedder, None, replace(s, fusion=fusion)) for s in (APP, DEEP)
        )
        runs = {
            qid: dl19_query(app, deep, passage_of, q, data.qrels[qid], mode) for qid, q in judged
        }
        modes[label] = {
            k: mean(r[k] for r in runs.values()) for k in ("ndcg@10", "recall@10", "recall@100")
        }
        modes[label]["per_query"] = runs
    return {
        "passages": len(data.passages),
        "queries": len(queries),
        "judged": len(judged),
        "skipped_no_qrels": len(queries) - len(judged),
        "recall_skipped_no_grade2": sum(max(data.qrels[q].values()) < 2 for q, _ in judged),
        "embed_seconds": embed_seconds,
        "embed_passages_per_second": len(data.passages) / embed_seconds if embed_seconds else None,
        "modes": modes,
    }


def dl19_query(
    app: Retriever, deep: Retriever, passage_of: dict[int, str], text: str, grades: dict, mode: Mode
) -> dict[str, float]:
    top10 = [passage_of[i] for i in app.rank(text, mode)[0].ids[:10].tolist()]
    top100 = [passage_of[i] for i in deep.rank(text, mode)[0].ids[:100].tolist()]
    relevant = {pid for pid, grade in grades.items() if grade >= 2}
    return {
        "ndcg@10": ndcg_at_k(top10, grades, 10),
        "recall@10": recall_at_k(top10, relevant, 10),
        "recall@100": recall_at_k(top100, relevant, 100),
    }


# -- output -----------------------------------------------------------------------------------


def print_qa(qa: dict[str, Any]) -> None:
    keys = ("recall@10_all", "mrr@10", "recall@10_email", "recall@10_note", "answer@10")
    rows = [(mode, *(m[k] for k in keys)) for mode, m in qa["modes"].items()]
    columns = ["mode", "recall@10", "MRR@10", "recall@10 mail", "recall@10 notes", "answer@10"]
    note = "answer@10: every must_contain string of the QA item occurs in the top-10 chunk texts"
    print_table(f"Demo QA ({qa['questions']} questions)", columns, rows, note)
    keys = ("question", "kind", "source", "bm25_rank", "dense_rank", "hybrid_rank")
    yes_no = {1.0: "yes", 0.0: "no"}
    rows = [
        (*(m[k] for k in keys), yes_no.get(m["answer@10"], "–"), m["hybrid_top_title"])
        for m in qa["hybrid_misses"]
    ]
    columns = ["question", "kind", "source", "bm25", "dense", "hybrid", "answer@10", "hybrid #1"]
    note = "ranks of the source within each retriever's 50 candidates (– = not among them)"
    print_table("Questions hybrid misses in its top 10", columns, rows, note, 3, wrap_first=True)


def print_latency(latency: dict[str, Any]) -> None:
    keys = ("chunks", "bm25_build_seconds", "dense_build_seconds", "bm25_load_seconds")
    keys += ("dense_load_seconds", "index_files_mib", "rss_mib_after_load")
    fresh = ("load_seconds", "rss_mib", "rss_mib_added")
    rows = [
        (name, *(r[k] for k in keys), *(r["fresh_process"][k] for k in fresh))
        for name, r in latency.items()
    ]
    columns = ["corpus", "chunks", "BM25 build s", "dense build s", "BM25 load s", "dense load s"]
    columns += ["index MiB", "RSS MiB (bench)", "fresh load s", "fresh RSS MiB", "+index MiB"]
    note = (
        "build = read from SQLite + build + save; load = from the saved .npz files; fresh = a new "
        "process loading them. Synthetic: texts resampled from demo chunks, vectors random unit "
        "(NOT real embeddings)"
    )
    print_table("Index build and start-up", columns, rows, note)
    rows = [
        (name, w, t["p50_ms"], t["p90_ms"])
        for name, r in latency.items()
        for w, t in r["latency"].items()
        if w in ("embed query", *MODES)
    ]
    note = "search(k=10) incl. chunk records; dense and hybrid include embedding the query"
    print_table("Query latency (ms)", ["corpus", "what", "p50", "p90"], rows, note, left=2)


def print_dl19(dl19: dict[str, Any]) -> None:
    keys = ("ndcg@10", "recall@10", "recall@100")
    rows = [(mode, *(m[k] for k in keys)) for mode, m in dl19["modes"].items()]
    note = (
        f"{dl19['judged']} of {dl19['queries']} queries judged ({dl19['skipped_no_qrels']} without "
        "qrels skipped); recall: grade >= 2 counts as relevant; @10 with the app's 50 candidates "
        "per retriever, @100 with 100"
    )
    columns = ["mode", "nDCG@10", "recall@10", "recall@100"]
    print_table(f"TREC DL19 ({dl19['passages']:,} passages)", columns, rows, note)


def run_all(args: argparse.Namespace, embedder: Embedder, tmp: Path) -> dict[str, Any]:
    items = load_qa()
    questions = [q.question for q in items]
    random.Random(0).shuffle(questions)  # mail and notes questions mixed
    queries = (questions * (args.queries // len(questions) + 1))[: args.queries]
    home = open_home(tmp / "demo")
    store = KnowledgeStore(open_db(home.knowledge_db))
    log("importing the demo corpus")
    import_demo(store, embedder)
    log("demo: index build, start-up, latency")
    retriever, build = build_and_load(store, embedder, home.index_dir)
    latency = {"demo": {**build, "latency": query_latency(retriever, embedder, queries)}}
    log("demo QA")
    qa = bench_qa(store, retriever, items)
    name = f"synthetic {args.chunks // 1000}k" if args.chunks >= 1000 else "synthetic"
    texts = store.chunk_texts()[1]
    latency[name] = bench_synthetic(embedder, tmp / "synthetic", texts, args.chunks, queries)
    return {"qa": qa, "latency": latency, "dl19": bench_dl19(embedder, args.eval_dir, args.quick)}


def main() -> None:
    args = parse_args()
    if args.measure_load:
        print(json.dumps(measure_load(args.measure_load)))
        return
    require_demo()
    embedder = make_embedder(EmbeddingSettings())
    embedder.embed_batch(["warm up"])
    with tempfile.TemporaryDirectory(prefix="bench-retrieval-") as tmp:
        results = run_all(args, embedder, Path(tmp))
    print_qa(results["qa"])
    print_latency(results["latency"])
    print_dl19(results["dl19"])
    print(f"wrote {write_results('retrieval', results, vars(args))}")


if __name__ == "__main__":
    main()
