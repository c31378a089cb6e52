"""Scale: the large-home index (FTS5 BM25 + hot/cold IVF) at 100k, 300k and 1M chunks.

    python bench/scale.py [--sizes 100000,300000,1000000] [--queries 200] [--no-quality]

Corpora grow from the demo's and DL19's real embeddings and texts (bench/scale_corpus.py). For
each size: build time, start-up and RSS of a fresh process, dense and hybrid query p50/p99 and
dense recall@10 against exact search, for the flat scan, IVF all resident, hot/cold (the plan
from a history of asked and predicted questions) and IVF with the same resident memory spread
uniformly, on a skewed (Zipf) and a uniform trace. Query embedding is excluded (vectors given).
The quality part compares the small-home and the large-home path on the demo QA set and DL19.

Writes bench/results/scale.json.
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"

# ruff: noqa: E402
import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import scale_corpus as corpus
from _common import (
    default_eval_dir,
    import_demo,
    load_dl19,
    log,
    percentile,
    print_table,
    rss_mib,
    timed,
    write_results,
)
from _synthetic import FakeEmbedder
from hotcold_baseline import plan_uniform

from assistant.config_sections import EmbeddingSettings, RetrievalSettings
from assistant.home import open_home
from assistant.knowledge import ivf
from assistant.knowledge.db import open_db
from assistant.knowledge.embeddings import make_embedder
from assistant.knowledge.hotcold import plan_hot
from assistant.knowledge.large import LargeSearch
from assistant.knowledge.retrieval import DenseIndex, Retriever, top_n
from assistant.knowledge.store import KnowledgeStore

APP = RetrievalSettings(top_k=10, candidates=50)
HISTORY, PREDICTED = 2000, 1000  # asked questions (weight 1), predicted ones (weight 0.5)
NPROBES = (8, 16, 32, 64)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,300000,1000000")
    parser.add_argument("--queries", type=int, default=200, help="timed queries per trace")
    parser.add_argument("--budget-mb", type=float, default=APP.hot_memory_mb)
    parser.add_argument("--no-quality", action="store_true")
    parser.add_argument("--out", default="scale", help="bench/results/OUT.json")
    parser.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    return parser.parse_args()


# -- a fresh process per design ------------------------------------------------------------------


def child(spec: dict[str, Any]) -> dict[str, Any]:
    """Start-up, RSS and latency of one design in this (fresh) process."""
    base = rss_mib()
    q = np.load(spec["queries"])
    exact = np.load(spec["exact"])
    start = time.perf_counter()
    if spec["design"] == "flat":
        dense = DenseIndex.load(Path(spec["flat"]))
        retriever = None
    else:
        settings = replace(APP, large_min_chunks=1, hot_memory_mb=spec["budget_mb"])
        settings = replace(settings, replan_every=10**9)
        store = KnowledgeStore(open_db(Path(spec["db"])))
        retriever = Retriever(store, FakeEmbedder("bench"), Path(spec["index_dir"]), settings)
        index = retriever.large().index()
        if spec.get("hot") is not None:
            index.set_hot(np.load(spec["hot"]))
    startup = time.perf_counter() - start
    rss_start = rss_mib() - base
    times: dict[str, list[float]] = {"dense": [], "hybrid": [], "bm25": []}
    found = []
    drop = os.open(spec["codes"], os.O_RDONLY) if spec.get("drop_cache") else None
    for i, (vector, text) in enumerate(zip(q["vectors"], q["texts"].tolist(), strict=True)):
        if drop is not None:
            os.posix_fadvise(drop, 0, 0, os.POSIX_FADV_DONTNEED)
        if retriever is None:
            (ids, _), took = timed(lambda v=vector: _flat(dense, v))
        else:
            (ids, _), took = timed(lambda v=vector: index.search(v, 10))
            for mode in ("hybrid", "bm25"):
                if drop is not None:
                    os.posix_fadvise(drop, 0, 0, os.POSIX_FADV_DONTNEED)
                times[mode].append(
                    timed(lambda m=mode, v=vector, t=text: retriever.rank(t, m, v))[1]
                )
        times["dense"].append(took)
        found.append(len(set((ids[:10] - 1).tolist()) & set(exact[i].tolist())) / 10)
    out = {"startup_s": startup, "rss_mib_start": rss_start, "rss_mib_end": rss_mib() - base}
    out["recall@10"] = float(np.mean(found))
    if retriever is not None:
        out["resident_index_mib"] = index.resident_bytes() / 2**20
        out["hit_rate"] = index.hit_rate()
    for what, t in times.items():
        if t:
            out[what] = {"p50_ms": percentile(t, 50) * 1e3, "p99_ms": percentile(t, 99) * 1e3}
    return out


def _flat(dense: DenseIndex, vector: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ranked = top_n(dense.ids, dense.scores(vector), 10)
    return ranked.ids, ranked.scores


def run_child(spec: dict[str, Any], tmp: Path) -> dict[str, Any]:
    path = tmp / "spec.json"
    path.write_text(json.dumps(spec))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(path)]
    done = subprocess.run(
        cmd, capture_output=True, text=True, env=os.environ | {"OMP_NUM_THREADS": "2"}
    )
    if done.returncode:
        raise RuntimeError(f"child {spec['design']} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().split("\n")[-1])


# -- one corpus size ---------------------------------------------------------------------------


def scale_run(n: int, seeds: corpus.Seeds, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    root = tmp / f"n{n}"
    home = open_home(root)
    store = KnowledgeStore(open_db(home.knowledge_db))
    topics = np.random.default_rng(n).integers(0, len(seeds.vectors), n)
    log(f"{n:,}: inserting chunks (FTS follows by trigger)")
    _, insert_s = timed(lambda: corpus.insert(store, seeds, topics))
    vectors = corpus.vectors(seeds, topics)
    ids = np.arange(1, n + 1, dtype=np.int64)
    large = LargeSearch(store, home.index_dir, "bench", APP)
    path = home.index_dir / f"ivf-{large._tag()}-{store.version('vectors')}"
    log(f"{n:,}: building the IVF index")
    start = time.perf_counter()
    index = ivf.build(path, ids, vectors)
    build_s = time.perf_counter() - start
    out: dict[str, Any] = {"chunks": n, "insert_with_fts_s": insert_s, "ivf_build_s": build_s}
    out |= {"nlist": index.nlist, "codes_mib": int(index.list_bytes().sum()) / 2**20}
    traces = {
        k: corpus.trace(seeds, k, args.queries, seed=7 + i)
        for i, k in enumerate(("skewed", "uniform"))
    }
    exact = {k: corpus.exact_top(vectors, t.vectors) for k, t in traces.items()}
    out["nprobe_recall"] = nprobe_recall(index, traces["uniform"], exact["uniform"])
    flat = home.index_dir / "flat.npz"
    DenseIndex(ids, vectors.astype(np.float32)).save(flat)
    del vectors
    out["designs"] = designs(store, home, index, seeds, traces, exact, args, tmp)
    index.close()
    shutil.rmtree(root, ignore_errors=True)
    return out


def nprobe_recall(index: ivf.IvfIndex, trace: corpus.Trace, exact: np.ndarray) -> dict[int, float]:
    out = {}
    for nprobe in NPROBES:
        index.nprobe = nprobe
        got = [index.search(v, 10)[0] - 1 for v in trace.vectors]
        out[nprobe] = float(
            np.mean(
                [
                    len(set(g.tolist()) & set(e.tolist())) / 10
                    for g, e in zip(got, exact, strict=True)
                ]
            )
        )
    index.nprobe = APP.ivf_nprobe
    return out


def access_counts(index: ivf.IvfIndex, seeds: corpus.Seeds, kind: str) -> np.ndarray:
    """Probe counts of a history of asked (weight 1) and predicted (weight 0.5) questions."""
    counts = np.zeros(index.nlist)
    for trace, weight in (
        (corpus.trace(seeds, kind, HISTORY, 101), 1.0),
        (corpus.trace(seeds, kind, PREDICTED, 202), APP.predicted_weight),
    ):
        probed = index.nearest_clusters(trace.vectors, APP.ivf_nprobe)
        np.add.at(counts, probed[probed >= 0], weight)
    return counts


def designs(store, home, index, seeds, traces, exact, args, tmp: Path) -> dict[str, Any]:
    budget = int(args.budget_mb * 2**20)
    uniform_hot = tmp / "uniform_hot.npy"
    np.save(uniform_hot, plan_uniform(index.list_bytes(), budget).hot)
    base = {
        "db": str(home.knowledge_db),
        "index_dir": str(home.index_dir),
        "flat": str(home.index_dir / "flat.npz"),
        "codes": str(index.directory / ivf.CODES),
    }
    access = (
        home.index_dir / f"access-{LargeSearch(store, home.index_dir, 'bench', APP)._tag()}.npy"
    )
    results: dict[str, Any] = {}
    for kind, trace in traces.items():
        qfile, efile = tmp / f"q-{kind}.npz", tmp / f"e-{kind}.npy"
        np.savez(qfile, vectors=trace.vectors, texts=np.array(trace.texts))
        np.save(efile, exact[kind])
        counts = access_counts(index, seeds, kind)
        plan = plan_hot(counts, index.list_bytes(), budget)
        spec = base | {"queries": str(qfile), "exact": str(efile)}
        runs = {
            "flat": spec | {"design": "flat"},
            "ivf all resident": spec | {"design": "ivf", "budget_mb": 10**6},
            "hot/cold": spec | {"design": "ivf", "budget_mb": args.budget_mb},
            "uniform resident": spec
            | {"design": "ivf", "budget_mb": args.budget_mb, "hot": str(uniform_hot)},
        }
        for name in ("hot/cold", "uniform resident"):
            runs[f"{name}, page cache dropped"] = runs[name] | {"drop_cache": True}
        if kind == "uniform":
            runs.pop("flat")
        results[kind] = {"planned_share_of_probes": plan.share_of_probes}
        for name, run in runs.items():
            np.save(access, counts)  # the hot/cold plan at start-up comes from these counts
            log(f"{kind} trace: {name}")
            results[kind][name] = run_child(run, tmp)
    return results


# -- quality: small-home path against large-home path ---------------------------------------------


def quality(store: KnowledgeStore, embedder, index_dir: Path, eval_dir: Path) -> dict[str, Any]:
    from _common import load_qa, mean
    from _synthetic import BulkDoc, bulk_insert, put_vectors
    from retrieval import bench_qa, dl19_query, dl19_vectors

    out: dict[str, Any] = {"demo": {}, "dl19": {}}
    for path, min_chunks in (("small (numpy BM25 + flat)", 10**9), ("large (FTS5 + IVF)", 1)):
        settings = replace(APP, large_min_chunks=min_chunks)
        retriever = Retriever(store, embedder, index_dir, settings)
        qa = bench_qa(store, retriever, load_qa())
        out["demo"][path] = {
            m: {k: v for k, v in r.items() if not isinstance(v, list)}
            for m, r in qa["modes"].items()
        }
    data = load_dl19(eval_dir)
    home = open_home(index_dir.parent / "dl19")
    dl_store = KnowledgeStore(open_db(home.knowledge_db))
    ids = bulk_insert(dl_store, [BulkDoc(f"dl19:{pid}", "", [text]) for pid, text in data.passages])
    passage_of = dict(zip(ids.tolist(), (pid for pid, _ in data.passages), strict=True))
    put_vectors(dl_store, embedder.name, ids, dl19_vectors(embedder, data)[0])
    judged = [(qid, text) for qid, text in data.queries if qid in data.qrels]
    for path, min_chunks in (("small (numpy BM25 + flat)", 10**9), ("large (FTS5 + IVF)", 1)):
        app = Retriever(
            dl_store, embedder, home.index_dir, replace(APP, large_min_chunks=min_chunks)
        )
        deep = Retriever(
            dl_store,
            embedder,
            home.index_dir,
            replace(APP, top_k=100, candidates=100, large_min_chunks=min_chunks),
        )
        out["dl19"][path] = {
            mode: {k: mean(r[k] for r in runs) for k in ("ndcg@10", "recall@10", "recall@100")}
            for mode in ("bm25", "dense", "hybrid")
            for runs in [
                [dl19_query(app, deep, passage_of, q, data.qrels[qid], mode) for qid, q in judged]
            ]
        }
    return out


def seeds_from(store: KnowledgeStore, embedder, eval_dir: Path) -> corpus.Seeds:
    from retrieval import dl19_vectors

    _, demo_vectors = store.embedding_matrix(embedder.name)
    demo_texts = store.chunk_texts()[1]
    data = load_dl19(eval_dir)
    dl_vectors = dl19_vectors(embedder, data)[0]
    texts = demo_texts + [t for _, t in data.passages]
    return corpus.make_seeds(np.concatenate([demo_vectors, dl_vectors]), texts)


# -- output --------------------------------------------------------------------------------------


def print_results(results: dict[str, Any]) -> None:
    for n, r in results["scale"].items():
        rows = []
        for kind in ("skewed", "uniform"):
            for name, d in r["designs"][kind].items():
                if not isinstance(d, dict):
                    continue
                hybrid = d.get("hybrid", {})
                rows.append(
                    (
                        kind,
                        name,
                        d["startup_s"],
                        d["rss_mib_end"],
                        d.get("resident_index_mib"),
                        d["dense"]["p50_ms"],
                        d["dense"]["p99_ms"],
                        hybrid.get("p50_ms"),
                        hybrid.get("p99_ms"),
                        d["recall@10"],
                        d.get("hit_rate"),
                    )
                )
        cols = [
            "trace",
            "design",
            "start s",
            "RSS MiB",
            "resident MiB",
            "dense p50",
            "dense p99",
            "hybrid p50",
            "hybrid p99",
            "recall@10",
            "hot hits",
        ]
        note = (
            f"build {r['ivf_build_s']:.0f} s (IVF), insert+FTS {r['insert_with_fts_s']:.0f} s; "
            f"dense recall@10 by nprobe {r['nprobe_recall']}"
        )
        print_table(f"{int(n):,} chunks", cols, rows, note)
    if "quality" in results:
        q = results["quality"]
        rows = [
            (path, mode, m["recall@10_all"], m["mrr@10"])
            for path, modes in q["demo"].items()
            for mode, m in modes.items()
        ]
        print_table("Demo QA: small vs large path", ["path", "mode", "recall@10", "MRR@10"], rows)
        rows = [
            (path, mode, m["ndcg@10"], m["recall@100"])
            for path, modes in q["dl19"].items()
            for mode, m in modes.items()
        ]
        print_table("DL19: small vs large path", ["path", "mode", "nDCG@10", "recall@100"], rows)


def main() -> None:
    args = parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child.read_text()))))
        return
    embedder = make_embedder(EmbeddingSettings())
    tmp = Path(tempfile.mkdtemp(prefix="scale-", dir="/tmp"))
    try:
        home = open_home(tmp / "demo")
        store = KnowledgeStore(open_db(home.knowledge_db))
        log("importing the demo corpus")
        import_demo(store, embedder)
        results: dict[str, Any] = {}
        if not args.no_quality:
            log("quality: small vs large path")
            results["quality"] = quality(store, embedder, home.index_dir, args.eval_dir)
        seeds = seeds_from(store, embedder, args.eval_dir)
        results["seeds"] = len(seeds.vectors)
        results["scale"] = {}
        for n in (int(s) for s in args.sizes.split(",") if s):
            results["scale"][n] = scale_run(n, seeds, args, tmp)
            write_results(args.out, results, {k: str(v) for k, v in vars(args).items()})
        write_results(args.out, results, {k: str(v) for k, v in vars(args).items()})
        print_results(results)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
