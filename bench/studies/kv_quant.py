"""Smaller KV nodes: the KV cache as q8_0 and q4_0 against f16, side by side in one run.

    python bench/studies/kv_quant.py [--limit N] [--home DIR]

Three pipelines on one demo home, [llm] kv_type f16, q8_0 and q4_0 (the quantised ones compute
with flash attention).
Each answers each demo question twice: uncached, then with its [system, chunk …] prefix restored
from its own KV tree (the first answer stored it). Per KV type: bytes per cached token, restore
time per segment, answers identical cached vs uncached (exact reuse must stay token-identical),
and against f16's uncached answers: identical answers, first-token agreement, mean KL(f16 ‖ type)
of the first answer token, all facts in the answer, ROUGE-L. Writes bench/results/kv_quant.json.

With --any-order (issue 47: q8_0 halves a node's bytes, but any-order reuse moves keys, which
llama.cpp re-rotates through f32 for a quantised cache), f16 and q8_0 only, the reader off: in
each pipeline every chunk of every question's prompt gets its [system, chunk] node first, as a
night makes them (bench/studies/reuse.py precompute), then each question is answered uncached
and with [cache] reuse = "any-order", repair "evidence" (every chunk's node moved where it
lands). Per type: prefill tokens/s uncached (the quantised cache computes with flash
attention), TTFT any-order, and the any-order answers against f16's uncached (naive) and f16's
any-order answers: identical, first token, facts, ROUGE-L.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

from _common import (  # noqa: E402
    QA_FILES,
    demo_context,
    log,
    mean,
    print_table,
    require_demo,
    write_results,
)
from _questions import Question, load  # noqa: E402
from quality import has_expected, rouge_l  # noqa: E402
from reuse import QUALITY_COLUMNS, FirstToken, answer_once  # noqa: E402
from reuse import precompute as chunk_nodes  # noqa: E402

from assistant import events as p  # noqa: E402
from assistant.answer.answerer import Answerer, CacheLayers  # noqa: E402

TYPES = ("f16", "q8_0", "q4_0")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, nargs="*", default=list(QA_FILES))
    parser.add_argument("--limit", type=int, default=12, help="every n-th question to N (0: all)")
    parser.add_argument("--home", type=Path, help="an imported home to copy (default: import)")
    parser.add_argument("--model", default="", help="[models] writer (default: the shipped one)")
    parser.add_argument(
        "--any-order", action="store_true", help="f16 vs q8_0, every chunk's node moved"
    )
    parser.add_argument("--out", default="kv_quant")
    return parser.parse_args()


def answer(pipe: Answerer, first: FirstToken, q: Question, cached: bool) -> dict[str, Any]:
    events = list(pipe.answer(q.question, CacheLayers(qa=False, kv=cached)))
    done = next(e for e in events if isinstance(e, p.AnswerDone))
    return {
        "answer": done.answer,
        "first": first.last,
        "reused": done.kv_reused_tokens,
        "kv_load": done.timings["kv_load"],
        "facts_in_answer": has_expected(done.answer, q.must_contain),
        "rouge_l": rouge_l(done.answer, q.answer) if q.answer else None,
    }


def node_sizes(pipe: Answerer) -> tuple[int, int]:
    """(bytes, tokens) of every KV node the tree holds."""
    rows = pipe.kv.db.execute(
        "SELECT b.size, n.n_tokens - coalesce(parent.n_tokens, 0) FROM kv_nodes n "
        "JOIN blobs b ON b.key = n.blob_key LEFT JOIN kv_nodes parent ON parent.id = n.parent_id "
        "WHERE n.model = ?",
        [pipe.kv.model],
    ).fetchall()
    return sum(r[0] for r in rows), sum(r[1] for r in rows)


def share(values: list[Any]) -> float:
    kept = [v for v in values if v is not None]
    return sum(map(bool, kept)) / len(kept) if kept else float("nan")


def summarise(rows: list[dict[str, Any]], ref: list[dict[str, Any]], sizes) -> dict[str, Any]:
    def kl(a: np.ndarray, b: np.ndarray) -> float:
        return float((np.exp(a) * (a - b)).sum())

    plain = [r["uncached"] for r in rows]
    pairs = list(zip(plain, [r["uncached"] for r in ref], strict=True))
    return {
        "questions": len(rows),
        "bytes_per_token": sizes[0] / sizes[1] if sizes[1] else float("nan"),
        "restore_s_mean": mean(r["cached"]["kv_load"] for r in rows),
        "cached_identical_to_uncached": share(
            [r["cached"]["answer"] == r["uncached"]["answer"] for r in rows]
        ),
        "identical_to_f16": share([a["answer"] == b["answer"] for a, b in pairs]),
        "first_token_agreement": share(
            [int(a["first"].argmax()) == int(b["first"].argmax()) for a, b in pairs]
        ),
        "first_token_kl_mean": mean(kl(b["first"], a["first"]) for a, b in pairs),
        "facts_in_answer": share([r["facts_in_answer"] for r in plain]),
        "rouge_l": mean(r["rouge_l"] for r in plain if r["rouge_l"] is not None),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    questions = load(args.questions, args.limit)
    rows: dict[str, list[dict[str, Any]]] = {t: [] for t in TYPES}
    with tempfile.TemporaryDirectory() as tmp:
        pipes = {}
        for kv_type in TYPES:
            ctx = demo_context(Path(tmp) / kv_type, args.home)
            ctx.settings.llm.kv_type = kv_type
            ctx.settings.models.writer = args.model or ctx.settings.models.writer
            pipe = ctx.answerer()
            pipes[kv_type] = (pipe, FirstToken(pipe.cache.llm))
        for i, q in enumerate(questions):
            turn = i % len(TYPES)
            for kv_type in TYPES[turn:] + TYPES[:turn]:
                pipe, first = pipes[kv_type]
                uncached = answer(pipe, first, q, cached=False)
                answer(pipe, first, q, cached=True)  # stores the prefix
                cached = answer(pipe, first, q, cached=True)  # restores it
                rows[kv_type].append({"id": q.id, "uncached": uncached, "cached": cached})
            log(f"{i + 1}/{len(questions)} {q.id}")
        sizes = {t: node_sizes(pipes[t][0]) for t in TYPES}
    summary = {t: summarise(rows[t], rows["f16"], sizes[t]) for t in TYPES}
    for design_rows in rows.values():
        for row in design_rows:
            for part in ("uncached", "cached"):
                del row[part]["first"]
    return {"summary": summary, "rows": rows}


ANY_ORDER = "any-order/evidence"


def run_any_order(args: argparse.Namespace) -> dict[str, Any]:
    """f16 and q8_0, each uncached and any-order after every prompt chunk's node (docstring)."""
    questions = load(args.questions, args.limit)
    types = TYPES[:2]
    rows: dict[str, dict[str, list[dict]]] = {t: {"naive": [], ANY_ORDER: []} for t in types}
    with tempfile.TemporaryDirectory() as tmp:
        pipes, nodes = {}, {}
        for kv_type in types:
            ctx = demo_context(Path(tmp) / kv_type, args.home)
            ctx.settings.llm.kv_type = kv_type
            ctx.settings.models.writer = args.model or ctx.settings.models.writer
            ctx.settings.models.reader = "none"  # the writer's answers, from the same evidence
            pipe = ctx.answerer()
            pipes[kv_type] = (pipe, FirstToken(pipe.cache.llm))
            nodes[kv_type] = chunk_nodes(pipe, questions)
        sizes = {t: node_sizes(pipes[t][0]) for t in types}
        for i, q in enumerate(questions):
            turn = i % len(types)
            for kv_type in types[turn:] + types[:turn]:
                pipe, first = pipes[kv_type]
                for design in ("naive", ANY_ORDER)[:: 1 if i % 2 else -1]:
                    rows[kv_type][design].append(answer_once(pipe, first, q, design))
            log(f"{i + 1}/{len(questions)} {q.id}")
    ref = rows["f16"]["naive"]
    summary = {
        t: any_order_summary(rows[t], ref, rows["f16"][ANY_ORDER], sizes[t], nodes[t])
        for t in types
    }
    for by_design in rows.values():
        for design_rows in by_design.values():
            for row in design_rows:
                del row["first"]
    return {"summary": summary, "rows": rows}


def any_order_summary(rows, naive_f16, any_f16, sizes, nodes) -> dict[str, Any]:
    """One KV type's figures (run_any_order), its any-order answers against f16's."""
    naive, moved = rows["naive"], rows[ANY_ORDER]

    def versus(ref: list[dict[str, Any]]) -> dict[str, float]:
        pairs = list(zip(moved, ref, strict=True))
        return {
            "identical": share([a["answer"] == b["answer"] for a, b in pairs]),
            "first_token_agreement": share(
                [int(a["first"].argmax()) == int(b["first"].argmax()) for a, b in pairs]
            ),
            "facts_kept": share([a["facts_in_answer"] >= b["facts_in_answer"] for a, b in pairs]),
        }

    return {
        "questions": len(naive),
        "chunk_nodes": nodes,
        "bytes_per_token": sizes[0] / sizes[1] if sizes[1] else float("nan"),
        "prefill_tokens_per_s": sum(r["prompt_tokens"] for r in naive)
        / sum(r["prefill"] for r in naive),
        "naive_ttft_p50": float(np.median([r["ttft"] for r in naive])),
        "any_order_ttft_p50": float(np.median([r["ttft"] for r in moved])),
        "any_order_share": share([r["mode"] == "any-order" for r in moved]),
        "naive_identical_to_f16": share(
            [a["answer"] == b["answer"] for a, b in zip(naive, naive_f16, strict=True)]
        ),
        "any_order_vs_naive_f16": versus(naive_f16),
        "any_order_vs_any_order_f16": versus(any_f16),
        "facts_naive": share([r["facts_in_answer"] for r in naive]),
        "facts_any_order": share([r["facts_in_answer"] for r in moved]),
        "rouge_l_any_order": mean(r["rouge_l"] for r in moved if r["rouge_l"] is not None),
    }


ANY_COLUMNS = [
    ("bytes_per_token", "bytes/token"),
    ("prefill_tokens_per_s", "prefill tok/s"),
    ("naive_ttft_p50", "naive TTFT"),
    ("any_order_ttft_p50", "any TTFT"),
    ("any_order_share", "any share"),
    ("naive_identical_to_f16", "naive=f16"),
    ("facts_naive", "facts naive"),
    ("facts_any_order", "facts any"),
    ("rouge_l_any_order", "ROUGE-L any"),
]


COLUMNS = [
    ("bytes_per_token", "bytes/token"),
    ("restore_s_mean", "restore s"),
    ("cached_identical_to_uncached", "cached=uncached"),
    ("identical_to_f16", "=f16"),
    *QUALITY_COLUMNS,
]


def main() -> None:
    args = parse_args()
    require_demo()
    if args.any_order:
        results = run_any_order(args)
        summary = results["summary"]
        print_table(
            f"KV cache type under any-order reuse, {summary['f16']['questions']} demo questions",
            ["KV type", *(label for _, label in ANY_COLUMNS), "any=f16 any", "any=f16 naive"],
            [
                [t, *(s[k] for k, _ in ANY_COLUMNS)]
                + [s["any_order_vs_any_order_f16"]["identical"]]
                + [s["any_order_vs_naive_f16"]["identical"]]
                for t, s in summary.items()
            ],
        )
        write_results(args.out, results, {k: str(v) for k, v in vars(args).items()})
        return
    results = run(args)
    summary = results["summary"]
    print_table(
        f"KV cache type on {summary['f16']['questions']} demo questions",
        ["KV type", *(label for _, label in COLUMNS)],
        [[t, *(s[k] for k, _ in COLUMNS)] for t, s in summary.items()],
    )
    write_results(args.out, results, {k: str(v) for k, v in vars(args).items()})


if __name__ == "__main__":
    main()
