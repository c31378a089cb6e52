"""How long a question served from the QA bank takes, the reader's "same question" call included
(issue 46: a one-shot `ask` ≤ 3 s p50, a warm one ≤ 1 s).

The real mailbox's paraphrase pairs (data/qa/skilling_pairs.jsonl): each stored question is
answered through the app's answer path into an empty QA bank of a copy of the home; then each
paraphrase is asked with the reader's kept verdicts cleared first (memory and the cache
database), so every timing pays the reader's call:
- warm: in this process, the whole answer (events to AnswerDone), the models loaded;
- one-shot: `assistant ask` in a new process, as a user types it (imports, model loads, the
  reader's instruction KV read from disk);
- again: the same one-shot a second time, its verdict kept (what a repeat costs).
Only questions the app serves count; the reader's call alone is timed apart ("same check").

    python bench/served_latency.py [--real-home H] [--pairs 30] [--one-shot 10]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import default_eval_dir, log, percentile, print_table, write_results  # noqa: E402
from qa_hits import home_copy, load_pairs, store_answers  # noqa: E402

from assistant.answer.answerer import ALL_LAYERS  # noqa: E402
from assistant.events import AnswerDone, QuoteFound  # noqa: E402
from assistant.services import Services, open_services  # noqa: E402


def forget_verdicts(ctx: Services) -> None:
    """The reader answers afresh: nothing kept in memory or in the cache database."""
    if ctx.judge is not None:
        ctx.judge._memo.clear()
    with ctx.cache_db.conn:
        ctx.cache_db.execute("DELETE FROM verdicts")


def warm(ctx: Services, question: str) -> dict:
    forget_verdicts(ctx)
    start = time.perf_counter()
    quote = None
    for event in ctx.answerer().answer(question, ALL_LAYERS):
        if isinstance(event, QuoteFound) and quote is None:
            quote = time.perf_counter() - start
        if isinstance(event, AnswerDone):
            done = event
    return {"question": question, "served": done.qa_hit, "seconds": time.perf_counter() - start,
            "quote_s": quote}  # fmt: skip


def one_shot(home: Path, question: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "assistant.cli", "--home", str(home), "ask", question],
                   check=True, capture_output=True)  # fmt: skip
    return time.perf_counter() - start


def same_check(ctx: Services, stored: str, asked: str) -> float:
    forget_verdicts(ctx)
    start = time.perf_counter()
    ctx.judge.same(stored, asked)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real-home", type=Path, help="an imported real-mail home to copy")
    parser.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    parser.add_argument("--pairs", type=int, default=30, help="paraphrase pairs tried")
    parser.add_argument("--one-shot", type=int, default=10, help="served ones asked one-shot")
    parser.add_argument("--out", default="served_latency")
    args = parser.parse_args()
    pairs = [p for p in load_pairs("real", args.eval_dir, 0) if p.paraphrase][: args.pairs]
    with tempfile.TemporaryDirectory() as tmp:
        home = home_copy("real", args.real_home, Path(tmp), args.eval_dir)
        ctx = open_services(home)
        if ctx.judge is None:
            sys.exit(f"no reader: {ctx.reader_note}")
        store_answers(ctx, list(dict.fromkeys(p.stored for p in pairs)), True)
        log(f"stored {len(ctx.qa.entries())} answers; asking {len(pairs)} paraphrases")
        rows = [warm(ctx, p.asked) | {"stored": p.stored} for p in pairs]
        served = [r for r in rows if r["served"]]
        for row in served:
            row["same_check_s"] = same_check(ctx, row["stored"], row["question"])
        for row in served[: args.one_shot]:
            forget_verdicts(ctx)
            row["one_shot_s"] = one_shot(home, row["question"])
            row["again_s"] = one_shot(home, row["question"])
    report(rows, served, args)


def report(rows: list[dict], served: list[dict], args: argparse.Namespace) -> None:
    def p(key: str, q: float) -> float:
        return percentile([r[key] for r in served if key in r], q)

    lines = [
        (name, sum(key in r for r in served), p(key, 50), p(key, 90))
        for name, key in (
            ("warm, the reader's call included", "seconds"),
            ("  of which the quote", "quote_s"),
            ("  the same-question check alone", "same_check_s"),
            ("one-shot ask, the reader's call included", "one_shot_s"),
            ("one-shot ask, its verdict kept", "again_s"),
        )  # fmt: skip
    ]
    print_table(
        f"Served from the QA bank: {len(served)} of {len(rows)} paraphrases (seconds)",
        ["", "n", "p50", "p90"],
        lines,
    )
    summary = {name: {"n": n, "p50_s": a, "p90_s": b} for name, n, a, b in lines}
    write_results(args.out, {"tried": len(rows), "served": len(served), "summary": summary,
                             "rows": rows}, vars(args))  # fmt: skip


if __name__ == "__main__":
    main()
