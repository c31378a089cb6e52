"""Pre-emption benchmark: how long a user question waits for the model while precompute runs.

A precompute pass runs in a background thread on the demo corpus (decoding, the longest kind
of job: τ is set below the decode cutoff). Meanwhile demo questions are asked one by one with the
QA bank off, and each answer's `wait` timing — from wanting the model to holding it — is kept.
The same questions asked with nothing running give the baseline. `--writer` answers and
precomputes with another model (issue 47: at 1.5B a night's piece costs four times as much, and
the wait must stay under a second at p95).

    python bench/preemption.py [--questions 8] [--writer qwen2.5-coder-1.5b] [--out preemption]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from _common import demo_context, load_qa, log, percentile, print_table, require_demo, write_results  # noqa: E402

from assistant import events as p  # noqa: E402
from assistant.answer.answerer import CacheLayers  # noqa: E402
from assistant.precompute.runner import Precompute  # noqa: E402


def ask_all(pipe, questions: list[str], gap_s: float) -> list[float]:
    waits = []
    for question in questions:
        events = pipe.answer(question, CacheLayers(qa=False))
        done = [e for e in events if isinstance(e, p.AnswerDone)][0]
        waits.append(done.timings["wait"])
        time.sleep(gap_s)
    return waits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=8)
    parser.add_argument("--gap", type=float, default=3.0, help="seconds between questions")
    parser.add_argument("--home", type=Path, help="an imported demo home to reuse (copied)")
    parser.add_argument("--writer", default="", help="[models] writer (default: the shipped)")
    parser.add_argument("--reader", default="none", help="[models] reader (default: none)")
    parser.add_argument("--out", default="preemption")
    args = parser.parse_args()
    require_demo()
    with tempfile.TemporaryDirectory() as tmp:
        ctx = demo_context(Path(tmp), args.home)
        ctx.settings.models.writer, ctx.settings.models.reader = args.writer, args.reader
        ctx.settings.answer.max_tokens = 48
        log(f"writer {ctx.llm.path.name}, reader {args.reader}")
        pipe = ctx.answerer()
        qa = load_qa()
        questions = [q.question for q in qa[:: max(1, len(qa) // args.questions)]][: args.questions]
        idle = ask_all(pipe, questions, 0.0)
        pipe.qa.threshold = 0.5  # strategy 2: background jobs decode
        stop = threading.Event()
        runner = Precompute(ctx.precompute_parts(), settle_seconds=0)
        worker = threading.Thread(target=runner.run, kwargs={"cancelled": stop.is_set})
        worker.start()
        time.sleep(20)  # let it get into prediction and population
        log("asking while precompute runs")
        pipe_questions = [f"{q} Please be brief." for q in questions]  # not answered before
        busy = ask_all(pipe, pipe_questions, args.gap)
        stop.set()
        worker.join()
        report(idle, busy, runner.queue.counts(), args)


def report(idle: list[float], busy: list[float], counts: dict, args) -> None:
    rows = [
        (name, len(w), percentile(w, 50), percentile(w, 95), max(w))
        for name, w in (("nothing running", idle), ("precompute running", busy))
    ]
    print_table(
        f"Seconds a user question waits for the model ({args.writer or 'shipped writer'})",
        ["while", "n", "wait p50 s", "wait p95 s", "wait max s"],
        rows,
        note=f"jobs done by the background run meanwhile: {counts['done']}",
    )
    write_results(
        args.out,
        {
            "idle_wait_s": idle,
            "busy_wait_s": busy,
            "jobs": counts,
            "max_wait_s": max(busy),
            "p50_wait_s": percentile(busy, 50),
            "p95_wait_s": percentile(busy, 95),
        },
        vars(args) | {"home": str(args.home) if args.home else None},
    )


if __name__ == "__main__":
    main()
