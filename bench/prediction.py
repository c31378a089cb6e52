"""Prediction benchmark: what one idle precompute run buys the demo questions.

The demo QA questions are never shown to the predictor (the history is empty; only the
knowledge abstract and the chunks are read). They are then "asked" in order in two arms:
- reactive: the caches hold only what earlier questions of the sequence left (no precompute);
- precompute: the same, on top of what one precompute run left.
For each question the pipeline's own retrieval gives the prompt order, and the cache is looked up
exactly as `Answerer.answer` would (QA bank at τ; longest run of cached prefix segments in the KV
tree) — without decoding, so both arms are measured on the same footing in minutes. The reactive
layer is the set of prefix paths and answered questions of the earlier questions (no eviction
under the default budget, so that set is what the tree would hold).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from _common import demo_context, load_qa, log, print_table, require_demo, write_results  # noqa: E402

from assistant.precompute.runner import Precompute  # noqa: E402
from assistant.services import Services  # noqa: E402
from cache.kv_tree import segment_hash  # noqa: E402

PENDING_TAUS = (0.95, 0.9, 0.85, 0.8)


def lookup_plan(ctx: Services, questions: list[str]) -> list[dict[str, Any]]:
    """Per question: its vector and its prompt's prefix-segment hashes and token counts."""
    pipe = ctx.answerer()
    vectors = pipe.embedder.embed_batch(questions)
    plans = []
    for question, vector in zip(questions, vectors, strict=True):
        hits = pipe.select(question, vector)
        segments = pipe.cache.segments([h.record.text for h in hits], question)
        hashes = [segment_hash(s) for s in segments.prefix]
        plans.append(
            {"vector": vector, "hashes": hashes, "sizes": [len(s) for s in segments.prefix]}
        )
    return plans


def replay(ctx: Services, plans: list[dict[str, Any]], tau: float) -> dict[str, Any]:
    """Ask the questions in order against the current caches plus what earlier ones left."""
    pipe = ctx.answerer()
    paths: set[tuple[str, ...]] = set()
    earlier: list = []
    qa_hits = chunk_hits = chunk_total = reused = prompt = 0
    pending = dict.fromkeys(PENDING_TAUS, 0)
    for plan in plans:
        vector, hashes, sizes = plan["vector"], plan["hashes"], plan["sizes"]
        near = pipe.qa.nearest(vector)
        reactive = max((float(vector @ v) for v in earlier), default=-1.0)
        if max(near.similarity if near else -1.0, reactive) >= tau:
            qa_hits += 1
        any_near = pipe.qa.nearest(vector, answered_only=False)
        for t in PENDING_TAUS:
            pending[t] += bool(
                any_near and any_near.entry.answer is None and any_near.similarity >= t
            )
        depth = _cached_depth(pipe, hashes, paths)
        chunk_hits += max(0, depth - 1)
        chunk_total += len(hashes) - 1
        reused += sum(sizes[:depth])
        prompt += sum(sizes)
        paths.update(tuple(hashes[: i + 1]) for i in range(len(hashes)))
        earlier.append(vector)
    n = len(plans)
    return {
        "questions": n,
        "qa_hit_rate": qa_hits / n,
        "kv_chunk_hit_rate": chunk_hits / chunk_total,
        "prefix_token_reuse": reused / prompt,
        "pending_match_rate": {str(t): c / n for t, c in pending.items()},
    }


def _cached_depth(pipe, hashes: list[str], paths: set[tuple[str, ...]]) -> int:
    tree = pipe.kv.longest_prefix(hashes).depth
    depth = 0
    while depth < len(hashes) and (depth < tree or tuple(hashes[: depth + 1]) in paths):
        depth += 1
    return depth


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--minutes", type=float, default=20.0, help="precompute time budget")
    parser.add_argument(
        "--stride", type=int, default=None, help="questions predicted per run (default: the config)"
    )
    parser.add_argument("--home", type=Path, help="an imported demo home to reuse (copied)")
    args = parser.parse_args()
    require_demo()
    with tempfile.TemporaryDirectory() as tmp:
        ctx = demo_context(Path(tmp), args.home)
        if args.stride is not None:
            ctx.settings.precompute.stride = args.stride
        tau = ctx.settings.cache.qa_threshold
        questions = [q.question for q in load_qa()]
        plans = lookup_plan(ctx, questions)
        before = replay(ctx, plans, tau)
        log(f"precomputing for up to {args.minutes} min (stride {ctx.settings.precompute.stride})")
        report = Precompute(ctx.precompute_parts(), settle_seconds=0).run(
            deadline=time.time() + args.minutes * 60
        )
        after = replay(ctx, plans, tau)
        show(before, after, report, ctx, args, tau)


def show(before: dict, after: dict, report, ctx: Services, args, tau: float) -> None:
    cpu = round(report.cpu_seconds, 1)
    rows = [
        (
            "reactive only",
            before["qa_hit_rate"],
            before["kv_chunk_hit_rate"],
            before["prefix_token_reuse"],
            before["pending_match_rate"]["0.9"],
            0.0,
        ),
        (
            "after 1 precompute run",
            after["qa_hit_rate"],
            after["kv_chunk_hit_rate"],
            after["prefix_token_reuse"],
            after["pending_match_rate"]["0.9"],
            cpu,
        ),
    ]
    stats = ctx.answerer().qa.stats()
    print_table(
        f"Demo questions ({after['questions']}) never shown to the predictor; τ = {tau}",
        [
            "arm",
            "QA hit rate",
            "KV chunk hit rate",
            "prefix tokens reused",
            "pending match τ=0.9",
            "precompute CPU-s",
        ],
        rows,
        note=f"precompute: {report.summary()}; QA bank: {stats['answered']} answered, "
        f"{stats['pending']} pending; KV tree: {ctx.answerer().kv.stats()}",
    )
    write_results(
        "prediction",
        {
            "reactive": before,
            "precompute": after,
            "precompute_report": vars(report),
            "qa_bank": stats,
            "kv_tree": ctx.answerer().kv.stats(),
            "strategy": "prefill only (τ ≥ decode_cutoff)"
            if tau >= ctx.settings.precompute.decode_cutoff
            else "prefill + decode",
        },
        vars(args) | {"home": str(args.home) if args.home else None},
    )


if __name__ == "__main__":
    main()
