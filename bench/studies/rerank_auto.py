"""The `rerank = "auto"` self-check on the demo mail: predicted detail questions written by
SmolLM2 from sampled chunks (their source is known), source@3 of fused against query likelihood
(SmolLM2, document KV) and the test cross-encoder, pruned and not; what the check turns on, and
its CPU cost (a night's check on this many questions). A mode over --max-seconds CPU-s a question
(the app's `[reranker] auto_max_seconds`; 0: no limit) is measured on the first probes only.

    python bench/studies/rerank_auto.py [--chunks 30] [--cross DIR] [--reuse HOME] [--modes ...]
                                [--max-seconds S] [--out NAME]

Writes bench/results/rerank_auto.json (or NAME.json).
"""

from __future__ import annotations

import os
import sys

os.environ["HF_HUB_OFFLINE"] = "1"

# ruff: noqa: E402
import argparse
import copy
import random
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

from _common import demo_context, log, print_table, require_demo, write_results
from train_cross_encoder import DEFAULT_OUT

from assistant.config_sections import RerankerSettings
from assistant.precompute.handlers import Handlers
from assistant.precompute.prediction_jobs import SEEDS
from assistant.rerank.loader import make_reranker
from assistant.rerank.selection import select
from assistant.rerank.selfcheck import run_check
from cache.jobs import JobQueue
from cache.prediction import History, KnowledgeAbstract


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--chunks", type=int, default=30, help="sampled chunks (3 questions each)")
    p.add_argument("--cross", type=Path, default=DEFAULT_OUT, help="cross-encoder folder")
    p.add_argument("--reuse", type=Path, help="a demo home to copy instead of importing")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--modes", nargs="+", default=["full", "cross", "cross-pruned"])
    p.add_argument("--max-seconds", type=float, default=RerankerSettings().auto_max_seconds)
    p.add_argument("--out", default="rerank_auto")
    return p.parse_args()


def probes(ctx, pipe, n: int, seed: int) -> list[tuple[str, int]]:
    """(question, source chunk): what precompute's detail prediction records."""
    db = ctx.cache_db
    handlers = Handlers(
        pipe.cache, pipe.select, pipe.memory, ctx.store, JobQueue(db), KnowledgeAbstract(db),
        History(db), ctx.settings.precompute,
    )  # fmt: skip
    ids = ctx.store.chunk_ids()
    out = []
    for i, chunk in enumerate(random.Random(seed).sample(ids, min(n, len(ids))), 1):
        text = ctx.store.chunk_records([chunk])[0].text
        out += [(q, chunk) for q in handlers._questions_from(text, SEEDS)]
        if i % 10 == 0:
            log(f"questions from {i}/{n} chunks")
    return out


def main() -> None:
    args = parse_args()
    require_demo(qa=False)
    with tempfile.TemporaryDirectory(prefix="bench-rerank-auto-") as tmp:
        ctx = demo_context(Path(tmp), args.reuse)
        settings = ctx.settings
        settings.reranker.n_threads = args.threads
        pipe = ctx.answerer()
        t0 = time.process_time()
        pairs = probes(ctx, pipe, args.chunks, args.seed)
        predict_cpu = time.process_time() - t0
        log(f"{len(pairs)} predicted questions")
        settings.rerank = "auto"
        ql = make_reranker(settings, ctx.home.models_dir, pipe.kv.blobs)
        other = copy.deepcopy(settings)  # the factories read their settings when first run
        other.reranker.model = str(args.cross)
        cross = make_reranker(other, ctx.home.models_dir, pipe.kv.blobs)

        def chosen(question: str, k: int, mode: str, check) -> list[int]:
            reranker = ql if mode in ("off", "full") else cross
            hits = select(ctx.retriever, reranker, question, k, mode=mode, check=check)
            return [h.chunk_id for h in hits]

        limit = args.max_seconds or float("inf")
        result = run_check(chosen, pairs, args.modes, limit)
    rows = [["fused", result.fused, "", "", "", result.fused_cpu_seconds, ""]] + [
        [m, r.source_at_3, r.wins, r.losses, r.p_value, r.cpu_seconds, "yes" if r.too_slow else ""]
        for m, r in result.modes.items()
    ]
    print_table(
        f"Self-check on the demo: source@3 of {result.questions} predicted questions",
        ["order", "source@3", "wins", "losses", "p (sign test)", "CPU s", "too slow"],
        rows,
        note=f"turned on: {result.chosen}; writing the questions took {predict_cpu:.0f} CPU-s",
    )
    data = asdict(result) | {"predict_cpu_seconds": predict_cpu, "cross_model": str(args.cross)}
    write_results(args.out, data, {k: str(v) for k, v in vars(args).items()})


if __name__ == "__main__":
    main()
