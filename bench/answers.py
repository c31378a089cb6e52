"""Answers a user can trust: does the answer hold the facts its prompt held, does the evidence line
hold them, and does the unsupported mark fall on the wrong answers? Side by side in one run.

    python bench/answers.py [--questions FILE.jsonl ...] [--limit N] [--designs a,b] [--home DIR]
    python bench/answers.py --remark bench/results/answers_all.json --out NAME

`--remark` keeps a results file's answers and marks them again with today's support check (the
answers do not depend on it): each question's prompt chunks are selected again as its design
selects them, and the evidence lines are the stored ones.

Every design answers every question with the caches off (the model's own answer), over one
imported demo home. Designs differ only in answer settings ([answer] in config.toml) and the
distinct-context switch; "today" is the prompt and decoding before this work. Per design:
source in prompt, all facts in prompt, all facts in answer, fact recall (share of expected
strings), all facts in the evidence line, the unsupported-answer rate, the share of wrong answers
marked unsupported and of right ones, how often a marked answer was wrong (the mark is judged on
the model's own text: under [answer] unsupported = "quote", on the draft the quoted evidence
replaced, while "facts in answer" counts what the user is shown), ROUGE-L against the reference
answer, seconds per answer. Writes bench/results/answers.json.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from _common import (  # noqa: E402
    QA_FILES,
    REPO,
    _jsonl,
    demo_context,
    log,
    mean,
    print_table,
    require_demo,
    write_results,
)
from quality import has_expected, rouge_l  # noqa: E402

from assistant import events as p  # noqa: E402
from assistant.answer import support  # noqa: E402
from assistant.answer.answerer import NO_CACHE, Answerer  # noqa: E402
from assistant.knowledge.store import ChunkRecord  # noqa: E402

# Each design: the [answer] settings it runs with ("system": another instruction in place of
# prompts/answer.txt). Every design names all of them, so a result stays readable after the
# shipped defaults change.
TODAY = {
    "evidence_sentences": 0,
    "evidence_place": "context",
    "repeat_guard": "off",
    "repeat_ngram": 4,
    "chunk_order": "best-first",
    "max_sentences": 0,
    "decoding": "greedy",
    "duplicates": "keep",
    "unsupported": "mark",
}
ALL = {
    "evidence_sentences": 2,
    "evidence_place": "context",
    "repeat_guard": "stop",
    "repeat_ngram": 4,
    "chunk_order": "best-first",
    "max_sentences": 2,
    "decoding": "greedy",
    "duplicates": "merge",
    "unsupported": "mark",
}
# "all" without the sentence limit, which cut facts off (bench/results/answers.json), the
# repeat stop at 8 tokens (at 4 it cut facts off: bench/results/answers_shipped.json)
# and an unsupported answer quoted from its evidence lines (bench/results/answers_quote_all.json)
SHIPPED = {**ALL, "max_sentences": 0, "repeat_ngram": 8, "unsupported": "quote"}
TERSE = (
    "You answer questions about the user's own emails and notes. Copy the answer from the "
    "context: the exact names, dates and numbers. One sentence. If the context does not say, "
    "say that you could not find it.\n\nContext:\n"
)
DESIGNS: dict[str, dict[str, Any]] = {
    "today": TODAY,
    "distinct": {**TODAY, "duplicates": "merge"},
    "evidence": {**TODAY, "evidence_sentences": 2},
    "guard-ban": {**TODAY, "repeat_guard": "ban"},
    "guard-stop": {**TODAY, "repeat_guard": "stop"},
    "two-sentences": {**TODAY, "max_sentences": 2},
    "cad": {**TODAY, "decoding": "cad"},
    "best-last": {**TODAY, "chunk_order": "best-last"},
    "terse": {**TODAY, "system": TERSE},
    "all": ALL,
    "all+cad": {**ALL, "decoding": "cad"},
    "shipped": SHIPPED,
    "shipped+mark": {**SHIPPED, "unsupported": "mark"},
    "all+best-last": {**ALL, "chunk_order": "best-last"},
    "shipped+asked": {**SHIPPED, "evidence_place": "question"},
    "shipped+terse": {**SHIPPED, "system": TERSE},
}


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    answer: str
    must_contain: tuple[str, ...]
    source: str


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, nargs="*", default=list(QA_FILES))
    parser.add_argument("--limit", type=int, default=0, help="every n-th question to N (0: all)")
    parser.add_argument("--designs", default=",".join(DESIGNS))
    parser.add_argument("--home", type=Path, help="an imported home to copy (default: import)")
    parser.add_argument("--out", default="answers")
    parser.add_argument("--partial", action="store_true", help="write the JSON after each question")
    parser.add_argument("--remark", type=Path, help="a results file whose answers to mark again")
    return parser.parse_args()


def load(paths: list[Path], limit: int) -> list[Question]:
    rows = [r for path in paths for r in _jsonl(path)]
    qs = [
        Question(
            r.get("id", str(i)),
            r["question"],
            r.get("answer", ""),
            tuple(r.get("must_contain", ())),
            r.get("source", ""),
        )
        for i, r in enumerate(rows)
    ]
    if limit and limit < len(qs):
        step = len(qs) / limit
        qs = [qs[int(i * step)] for i in range(limit)]
    return qs


def is_source(record: ChunkRecord, source: str) -> bool:
    if record.kind == "email":
        return record.message_id == source
    return bool(source) and Path(record.note_path).resolve() == (REPO / "data" / source).resolve()


def answer_once(pipe: Answerer, q: Question) -> dict[str, Any]:
    started = time.perf_counter()
    events = list(pipe.answer(q.question, NO_CACHE))
    seconds = time.perf_counter() - started
    ordered = next(e for e in events if isinstance(e, p.ChunksOrdered)).chunk_ids
    done = next(e for e in events if isinstance(e, p.AnswerDone))
    records = pipe.store.chunk_records(ordered)
    prompt = "\n".join(r.text for r in records)
    evidence = " ".join(e.sentence for e in done.evidence)
    must = q.must_contain
    return {
        "id": q.id,
        "answer": done.answer,
        "evidence": [e.sentence for e in done.evidence],
        "unsupported": done.unsupported,
        "supported": done.supported,
        "quoted": bool(done.drafted),
        "draft_facts": has_expected(done.drafted or done.answer, must),
        "source_in_prompt": any(is_source(r, q.source) for r in records),
        "facts_in_prompt": has_expected(prompt, must),
        "facts_in_answer": has_expected(done.answer, must),
        "fact_recall": recall(done.answer, must),
        "facts_in_evidence": has_expected(evidence, must) if evidence else False,
        "rouge_l": rouge_l(done.answer, q.answer) if q.answer else None,
        "seconds": round(seconds, 3),
    }


def recall(answer: str, must: tuple[str, ...]) -> float | None:
    if not must:
        return None
    return sum(bool(has_expected(answer, (m,))) for m in must) / len(must)


def share(rows: list[dict[str, Any]], key: str) -> float:
    values = [r[key] for r in rows if r[key] is not None]
    return sum(map(bool, values)) / len(values) if values else float("nan")


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    factual = [r for r in rows if r["facts_in_answer"] is not None]
    # the mark judges the model's own text: under "quote", the draft the quote stands in for
    wrong = [r for r in factual if not _draft_right(r)]
    right = [r for r in factual if _draft_right(r)]
    flagged = [r for r in factual if not r["supported"]]
    return {
        "questions": len(rows),
        "source_in_prompt": share(rows, "source_in_prompt"),
        "facts_in_prompt": share(factual, "facts_in_prompt"),
        "facts_in_answer": share(factual, "facts_in_answer"),
        "fact_recall": mean(r["fact_recall"] for r in factual),
        "facts_in_evidence": share(factual, "facts_in_evidence"),
        "unsupported": share([{"u": not r["supported"]} for r in factual], "u"),
        "quoted": share([{"q": r.get("quoted", False)} for r in factual], "q"),
        "wrong_marked": share([{"u": not r["supported"]} for r in wrong], "u"),
        "right_marked": share([{"u": not r["supported"]} for r in right], "u"),
        "marked_wrong": share([{"w": not _draft_right(r)} for r in flagged], "w"),
        "rouge_l": mean(r["rouge_l"] for r in rows if r["rouge_l"] is not None),
        "seconds": mean(r["seconds"] for r in rows),
    }


def _draft_right(row: dict[str, Any]) -> bool:
    """Whether the model's own text held the facts (files written before drafts were kept:
    the answer shown, which was the model's text unless it was quoted)."""
    return bool(row.get("draft_facts", row["facts_in_answer"]))


def remark(pipe: Answerer, q: Question, row: dict[str, Any]) -> dict[str, Any]:
    """`row` (an answer to `q`) with its support check done again over its prompt chunks."""
    if row.get("quoted"):
        raise SystemExit(f"{q.id}: a quoted answer keeps no draft to mark again")
    vector = pipe.embedder.embed_batch([q.question])[0]
    hits = pipe.select.rerank(q.question, pipe.select.candidates(q.question, vector))
    texts = [h.record.text for h in hits]
    args = (row["answer"], texts, q.question, row["evidence"], pipe.cache.system_prompt)
    supported, terms = support.check(*args)
    return {**row, "supported": supported, "unsupported": terms}


def run(args: argparse.Namespace) -> dict[str, Any]:
    old = json.loads(args.remark.read_text(encoding="utf-8")) if args.remark else None
    if old is not None:
        args.designs = ",".join(old["rows"])
    names = [d for d in args.designs.split(",") if d]
    unknown = [d for d in names if d not in DESIGNS]
    if unknown:
        raise SystemExit(f"unknown designs: {', '.join(unknown)} (known: {', '.join(DESIGNS)})")
    questions = load(args.questions, args.limit if old is None else 0)
    if old is not None:  # the questions the file answered, in its order
        ids = [r["id"] for r in next(iter(old["rows"].values()))]
        by_id = {q.id: q for q in questions}
        questions = [by_id[i] for i in ids]
    with tempfile.TemporaryDirectory() as tmp:
        ctx = demo_context(Path(tmp), args.home)
        pipe = ctx.answerer()
        base, system = ctx.settings, pipe.cache.system_prompt
        rows: dict[str, list[dict[str, Any]]] = {d: [] for d in names}
        for i, q in enumerate(questions):
            for name in names[i % len(names) :] + names[: i % len(names)]:
                design = dict(DESIGNS[name])
                pipe.cache.system_prompt = design.pop("system", system)
                settings = replace(base, answer=replace(base.answer, **design))
                pipe.settings = pipe.cache.settings = pipe.select.settings = settings
                if old is None:
                    rows[name].append(answer_once(pipe, q))
                else:
                    stored = {r["id"]: r for r in old["rows"][name]}
                    rows[name].append(remark(pipe, q, stored[q.id]))
            log(f"{i + 1}/{len(questions)} {q.id}")
            if args.partial:
                write_results(args.out, results(args, names, rows), {"partial": i + 1})
    return results(args, names, rows)


def results(
    args: argparse.Namespace, names: list[str], rows: dict[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    return {
        "questions": [str(p) for p in args.questions],
        "designs": {d: DESIGNS[d] for d in names},
        "summary": {d: summarise(rows[d]) for d in names},
        "rows": rows,
    }


COLUMNS = [
    ("source_in_prompt", "src∈prompt"),
    ("facts_in_prompt", "facts∈prompt"),
    ("facts_in_answer", "facts∈answer"),
    ("fact_recall", "recall"),
    ("facts_in_evidence", "facts∈evidence"),
    ("unsupported", "unsupported"),
    ("quoted", "quoted"),
    ("wrong_marked", "wrong marked"),
    ("right_marked", "right marked"),
    ("marked_wrong", "marked→wrong"),
    ("rouge_l", "ROUGE-L"),
    ("seconds", "s/answer"),
]


def main() -> None:
    args = parse_args()
    require_demo()
    results = run(args)
    table = [[name, *(s[key] for key, _ in COLUMNS)] for name, s in results["summary"].items()]
    print_table(
        f"Answers on {results['summary'][next(iter(results['summary']))]['questions']} questions",
        ["design", *(label for _, label in COLUMNS)],
        table,
    )
    write_results(args.out, results, {k: str(v) for k, v in vars(args).items()})


if __name__ == "__main__":
    main()
