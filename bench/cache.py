"""Cache benchmark: naive vs KV-hit vs QA-hit on the demo QA set, side by side in one run.

Per question, in this order: naive (no cache), cold (cache on, empty: pays for populating it),
KV hit (QA bank off: the whole prompt prefix is restored from the KV tree), QA hit (the same
question again, answered from the QA bank). Interleaving keeps the machine's noise on all four.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from _common import (  # noqa: E402
    import_demo,
    load_qa,
    log,
    percentile,
    print_table,
    require_demo,
    write_results,
)

from assistant import events as p  # noqa: E402
from assistant.answer.answerer import ALL_LAYERS, NO_CACHE, CacheLayers  # noqa: E402
from assistant.services import Services, open_services  # noqa: E402

MODES = ("naive", "cold", "kv_hit", "qa_hit")


def run_once(ctx: Services, question: str, layers: CacheLayers, tau: float) -> dict[str, Any]:
    pipe = ctx.answerer()
    pipe.qa.threshold = tau
    events = list(pipe.answer(question, layers))
    done: p.AnswerDone = events[-1]
    text = "".join(e.text for e in events if isinstance(e, p.TokenStreamed)) or done.answer
    return {
        "text": text,
        "qa_hit": done.qa_hit,
        "reused": done.kv_reused_tokens,
        "prompt": done.prompt_tokens,
        **done.timings,
    }


def measure(ctx: Services, questions: list[str], tau: float) -> dict[str, list[dict[str, Any]]]:
    runs: dict[str, list[dict[str, Any]]] = {m: [] for m in MODES}
    for i, q in enumerate(questions, 1):
        log(f"[{i}/{len(questions)}] {q}")
        runs["naive"].append(run_once(ctx, q, NO_CACHE, tau))
        runs["cold"].append(run_once(ctx, q, ALL_LAYERS, 2.0))
        # the QA bank off: τ = 2 alone does not keep it from answering (a verified candidate
        # above qa_candidate_threshold is served), so this run would be a QA hit
        runs["kv_hit"].append(run_once(ctx, q, CacheLayers(qa=False), tau))
        runs["qa_hit"].append(run_once(ctx, q, ALL_LAYERS, tau))
    return runs


def summarise(runs: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, float]]:
    out = {}
    for mode, rows in runs.items():
        ttft = [r["ttft"] for r in rows]
        total = [r["total"] for r in rows]
        out[mode] = {
            "ttft_p50_s": statistics.median(ttft),
            "ttft_p90_s": percentile(ttft, 90),
            "total_p50_s": statistics.median(total),
            "total_p90_s": percentile(total, 90),
            "kv_load_p50_s": statistics.median(r["kv_load"] for r in rows),
            "prefill_p50_s": statistics.median(r["prefill"] for r in rows),
            "reused_tokens_mean": statistics.mean(r["reused"] for r in rows),
            "prompt_tokens_mean": statistics.mean(r["prompt"] for r in rows),
            "qa_hits": sum(r["qa_hit"] for r in rows),
        }
    return out


def kv_bytes_per_token(ctx: Services) -> dict[str, float]:
    # a node's blob holds its own segment: its tokens are its prefix length minus its parent's
    sql = (
        "SELECT b.size, n.n_tokens - coalesce(p.n_tokens, 0) FROM kv_nodes n "
        "JOIN blobs b ON b.key = n.blob_key LEFT JOIN kv_nodes p ON p.id = n.parent_id"
    )
    rows = ctx.answerer().kv.db.execute(sql).fetchall()
    per_token = [size / tokens for size, tokens in rows if tokens > 0]
    return {
        "blobs": len(rows),
        "bytes_total": sum(r[0] for r in rows),
        "bytes_per_token_median": statistics.median(per_token) if per_token else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=12, help="questions from the demo QA set")
    parser.add_argument("--max-tokens", type=int, default=64, help="answer length cap")
    parser.add_argument("--home", type=Path, help="an imported demo home to reuse (copied)")
    args = parser.parse_args()
    require_demo()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        if args.home:
            shutil.copytree(args.home, home, ignore=shutil.ignore_patterns("cache"))
        ctx = open_services(home)
        if not args.home:
            import_demo(ctx.store, ctx.embedder)
        ctx.settings.answer.max_tokens = args.max_tokens
        tau = ctx.settings.cache.qa_threshold
        qa = load_qa()
        questions = [q.question for q in qa[:: max(1, len(qa) // args.limit)]][: args.limit]
        run_once(ctx, "warm up the models", NO_CACHE, tau)
        runs = measure(ctx, questions, tau)
        report(runs, kv_bytes_per_token(ctx), args, tau)


def report(runs, kv: dict[str, float], args, tau: float) -> None:
    summary = summarise(runs)
    naive = summary["naive"]
    same = sum(a["text"] == b["text"] for a, b in zip(runs["naive"], runs["kv_hit"], strict=True))
    rows = [
        (
            mode,
            s["ttft_p50_s"],
            s["ttft_p90_s"],
            s["total_p50_s"],
            s["total_p90_s"],
            s["ttft_p50_s"] / naive["ttft_p50_s"],
            s["reused_tokens_mean"],
            s["qa_hits"],
        )
        for mode, s in summary.items()
    ]
    print_table(
        f"Answer latency on {len(runs['naive'])} demo questions (max {args.max_tokens} tokens)",
        [
            "mode",
            "TTFT p50 s",
            "TTFT p90 s",
            "total p50 s",
            "total p90 s",
            "TTFT vs naive",
            "KV tokens reused",
            "QA hits",
        ],
        rows,
        note=f"KV-hit answers identical to naive: {same}/{len(runs['naive'])}; "
        f"KV load p50 {summary['kv_hit']['kv_load_p50_s'] * 1000:.1f} ms; "
        f"{kv['bytes_per_token_median']:.0f} bytes per cached token; τ = {tau}",
    )
    write_results(
        "cache",
        {
            "summary": summary,
            "kv_storage": kv,
            "identical_kv_vs_naive": same,
            "questions": len(runs["naive"]),
            "ratios": {
                "kv_hit_ttft_vs_naive": summary["kv_hit"]["ttft_p50_s"] / naive["ttft_p50_s"],
                "qa_hit_ttft_vs_naive": summary["qa_hit"]["ttft_p50_s"] / naive["ttft_p50_s"],
            },
            "runs": {
                m: [{k: v for k, v in r.items() if k != "text"} for r in rs]
                for m, rs in runs.items()
            },
        },
        vars(args) | {"home": str(args.home) if args.home else None},
    )


if __name__ == "__main__":
    main()
