"""Smaller KV nodes: the KV cache as q8_0 and q4_0 against f16, side by side in one run.

    python bench/studies/kv_quant.py [--limit N] [--home DIR]

Three pipelines on one demo home, [llm] kv_type f16, q8_0 and q4_0 (the quantised ones compute
with flash attention).
Each answers each demo question twice: uncached, then with its [system, chunk …] prefix restored
from its own KV tree (the first answer stored it). Per KV type: bytes per cached token, restore
time per segment, answers identical cached vs uncached (exact reuse must stay token-identical),
and against f16's uncached answers: identical answers, first-token agreement, mean KL(f16 ‖ type)
of the first answer token, all facts in the answer, ROUGE-L. Writes bench/results/kv_quant.json.
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
from reuse import QUALITY_COLUMNS, FirstToken  # noqa: E402

from assistant import events as p  # noqa: E402
from assistant.answer.answerer import Answerer, CacheLayers  # noqa: E402

TYPES = ("f16", "q8_0", "q4_0")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, nargs="*", default=list(QA_FILES))
    parser.add_argument("--limit", type=int, default=12, help="every n-th question to N (0: all)")
    parser.add_argument("--home", type=Path, help="an imported home to copy (default: import)")
    parser.add_argument("--model", default="", help="[models] writer (default: the shipped one)")
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
