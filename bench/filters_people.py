"""Filters read from the question against the same search without them, on every question set
of a real mailbox (issue 48): the answering mail in `search`'s top 3 and top 10 rows, and how
many questions a filter would have left with no mail (none should: such a filter ranks).

    python bench/filters_people.py --home /tmp/skilling/home \
        [--set data/qa/skilling_filters.jsonl --set data/qa/skilling_qa.jsonl ...] \
        [--today 2001-11-20] [--bonus 1.0] [--out filters_people]

Sets of three shapes: sender/date sets and answer sets (`question`, `source`; unanswerable
questions are left out), and follow-up sets (`first`, `first_source`, `followup`, `source`:
the first question, and the follow-up rewritten by the rules from the first question's
unfiltered search, as bench/followups.py does). The home is copied (never written); reranking
is off (the fused order: what is measured is the filtering). Writes bench/results/OUT.json.
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"

# ruff: noqa: E402
import argparse
import json
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

from _common import REPO, log, print_table, write_results
from filters import ROWS, copy_home, rank_of, rows_for

from assistant.knowledge import retrieval
from assistant.mail import filters as mail_filters
from assistant.mail.followup import Turn, rewrite
from assistant.mail.reader import QueryReader
from assistant.services import Services

TOP = 3
DEFAULT_SETS = ("skilling_filters", "skilling_qa", "skilling_followups", "skilling_recent")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=Path("/tmp/skilling/home"))
    parser.add_argument("--mbox", type=Path, default=Path("/tmp/skilling/skilling-j.mbox"))
    parser.add_argument("--set", dest="sets", type=Path, action="append")
    parser.add_argument("--today", type=date.fromisoformat, default=date(2001, 11, 20))
    parser.add_argument("--bonus", type=float, default=None, help="PREFERRED_BONUS to try")
    parser.add_argument("--first", type=float, default=None, help="FIRST_WEIGHT to try")
    parser.add_argument(
        "--unsaid",
        default=None,
        help="the filters whose words the ranking text leaves out, comma-separated (UNSAID to "
        "try; '' for none)",
    )
    parser.add_argument("--out", default="filters_people")
    args = parser.parse_args()
    args.sets = args.sets or [REPO / "data/qa" / f"{name}.jsonl" for name in DEFAULT_SETS]
    return args


def questions(ctx: Services, path: Path) -> list[dict]:
    """(id, question, source) of every answerable question of the set."""
    out = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        q = json.loads(line)
        if "followup" in q:
            out.append({"id": f"{q['id']}-first", "question": q["first"],
                        "source": q["first_source"]})  # fmt: skip
            out.append({"id": f"{q['id']}-followup", "question": _rewritten(ctx, q),
                        "source": q["source"]})  # fmt: skip
        elif q.get("source") and q.get("answerable", True):
            out.append({"id": q["id"], "question": q["question"], "source": q["source"]})
    return out


def _rewritten(ctx: Services, conv: dict) -> str:
    hits = ctx.retriever.search(conv["first"], ctx.settings.answer.context_chunks)
    last = Turn(conv["first"], conv["first"], "", [h.record.ref() for h in hits])
    return rewrite(conv["followup"], last).standalone


def per_question(ctx: Services, words: QueryReader, off: QueryReader, q: dict) -> dict:
    parsed = words.read(q["question"])
    narrows = getattr(parsed.filters, "narrows", parsed.filters.__bool__)()
    matched = words.count(parsed.filters) if narrows else None
    with_rows = rows_for(ctx, words, parsed)
    without_rows = rows_for(ctx, off, off.read(q["question"]))
    return {
        "id": q["id"],
        "question": q["question"],
        "parsed": parsed.filters.describe(),
        "narrows": narrows,
        "ranks": bool(getattr(parsed.filters, "ranked", ())),
        "matched": matched,
        "empty": matched == 0,
        "rank_with": rank_of(ctx, with_rows, q["source"]),
        "rank_without": rank_of(ctx, without_rows, q["source"]),
    }


def summary(rows: list[dict]) -> dict[str, Any]:
    n = len(rows)

    def within(key: str, top: int) -> float:
        return sum(1 for r in rows if r[key] is not None and r[key] <= top) / n if n else 0.0

    return {
        "questions": n,
        "top3_with_filters": within("rank_with", TOP),
        "top3_without_filters": within("rank_without", TOP),
        "top10_with_filters": within("rank_with", ROWS),
        "top10_without_filters": within("rank_without", ROWS),
        "filtered": sum(r["narrows"] for r in rows),
        "ranked": sum(r["ranks"] for r in rows),
        "empty_filters": sum(r["empty"] for r in rows),
        "better_with": sum(_better(r["rank_with"], r["rank_without"]) for r in rows),
        "worse_with": sum(_better(r["rank_without"], r["rank_with"]) for r in rows),
    }


def _better(a: int | None, b: int | None) -> bool:
    """Rank `a` in the top 3 where `b` is not."""
    return a is not None and a <= TOP and (b is None or b > TOP)


def main() -> None:
    args = parse_args()
    if args.bonus is not None:
        retrieval.PREFERRED_BONUS = args.bonus
    if args.first is not None:
        mail_filters.FIRST_WEIGHT = args.first
    if args.unsaid is not None:
        mail_filters.UNSAID = tuple(f for f in args.unsaid.split(",") if f)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="filters-people-") as tmp:
        ctx = copy_home(args.home, Path(tmp) / "home", args.mbox)
        words = QueryReader(ctx.store, args.today, "words")
        off = QueryReader(ctx.store, args.today, "off")
        t0 = time.perf_counter()
        words.people()
        book_s = time.perf_counter() - t0
        for path in args.sets:
            rows = [per_question(ctx, words, off, q) for q in questions(ctx, path)]
            results[path.stem] = {"summary": summary(rows), "questions": rows}
            log(f"{path.stem}: {len(rows)} questions")
    print_table(
        f"answering mail in search's top {TOP} / top {ROWS}: filters read from the words vs none",
        ["set", "n", "top 3 with", "top 3 without", "top 10 with", "top 10 without",
         "filtered", "ranked", "empty", "better", "worse"],
        [[name, s["questions"], s["top3_with_filters"], s["top3_without_filters"],
          s["top10_with_filters"], s["top10_without_filters"], s["filtered"], s["ranked"],
          s["empty_filters"], s["better_with"], s["worse_with"]]
         for name, s in ((k, v["summary"]) for k, v in results.items())],
    )  # fmt: skip
    data = {
        "today": args.today.isoformat(),
        "preferred_bonus": getattr(retrieval, "PREFERRED_BONUS", None),  # None: before them
        "first_weight": getattr(mail_filters, "FIRST_WEIGHT", None),
        "unsaid": list(getattr(mail_filters, "UNSAID", ())),  # [] before it
        "address_book_s": book_s,
        "sets": results,
    }
    print(f"wrote {write_results(args.out, data, {k: str(v) for k, v in vars(args).items()})}")


if __name__ == "__main__":
    main()
