"""Follow-up questions (issue 34): the follow-up's answering mail in the top 3 mails when asked
alone, rewritten by the rules (assistant/mail/followup.py) with the first turn's real retrieval
as the last turn's sources, and rewritten with its retrieval looking first in the last turn's
threads (assistant/mail/focus.py). No model: retrieval only. The set's `standalone` field (the
reference rewrite) is never read. Also the home's thread counts (assistant/mail/threads.py).

    python bench/followups.py [--home DIR] [--set data/qa/skilling_followups.jsonl]

The home's knowledge.db is copied (SQLite backup) into a temporary home and opened there, which
computes its threads, as any first open of a home from before threads does (the chunks that
repeat an earlier mail of their thread stay: thread_update.DROP_REPEATS); the given home is not
written. Writes
bench/results/followups.json.
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"

# ruff: noqa: E402
import argparse
import json
import sqlite3
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # this checkout, not bench/cache.py
sys.path.append(str(Path(__file__).resolve().parent))

from _common import log, print_table, write_results

from assistant.knowledge.retrieval import Hit
from assistant.mail import thread_update, threads
from assistant.mail.focus import WIDE, focus_first
from assistant.mail.followup import Turn, rewrite
from assistant.rerank.selection import candidates
from assistant.services import Services, open_services

REPO = Path(__file__).resolve().parent.parent
TOP = 3


def mails(hits: list[Hit], n: int = TOP) -> list[str]:
    """The first `n` distinct mails (Message-IDs) of `hits`."""
    return list(dict.fromkeys(h.record.message_id for h in hits))[:n]


def retrieve(ctx: Services, question: str) -> list[Hit]:
    vector = ctx.embedder.embed_batch([question])[0]
    duplicates = ctx.settings.answer.duplicates
    return candidates(ctx.retriever, question, WIDE, duplicates, vector)


def run_one(ctx: Services, conv: dict) -> dict:
    first = retrieve(ctx, conv["first"])
    sources = [h.record.ref() for h in first[: ctx.settings.answer.context_chunks]]
    last = Turn(conv["first"], conv["first"], "", sources)
    rw = rewrite(conv["followup"], last)
    alone = mails(retrieve(ctx, conv["followup"]))
    rewritten_hits = retrieve(ctx, rw.standalone)
    rewritten = mails(rewritten_hits)
    focused = mails(focus_first(rewritten_hits, rw.focus))
    three = tuple(dict.fromkeys(s["thread"] for s in sources[:3] if s["thread"]))
    focused3 = mails(focus_first(rewritten_hits, three))
    app = _quoted_mails(ctx, rw.standalone, rw.focus, filters=False)
    app_filters = _quoted_mails(ctx, rw.standalone, rw.focus, filters=True)
    source = conv["source"]
    return {
        "id": conv["id"],
        "followup": conv["followup"],
        "rewrite": rw.standalone,
        "because": list(rw.because),
        "first_found": conv["first_source"] in mails(first),
        "alone": source in alone,
        "rewritten": source in rewritten,
        "rewritten_focus": source in focused,
        "rewritten_focus3": source in focused3,
        "app": source in app,
        "app_filters": source in app_filters,
    }


def _quoted_mails(ctx: Services, question: str, focus, filters: bool) -> list[str]:
    """The top mails of the app's own follow-up path (Services.focused_answerer: the last
    turn's thread first), with or without the filters read from the rewritten question's
    words (the answerer's QueryReader); the candidates its quote is found in."""
    a = ctx.focused_answerer(focus)  # a fresh one each call: its reader is set for this ask
    if not filters:
        a.reader = None
    hits, _ = a.quote(question, ctx.embedder.embed_batch([question])[0])
    return mails(hits)


def scaled_seconds(ctx: Services, copies: int = 48) -> tuple[int, float]:
    """(mails, seconds) of threads.assign over the home's headers copied `copies` times (each
    copy its own ids and subjects): the cost of a rebuild on a mailbox of ~100k mails."""
    mails = ctx.store.mail_headers()
    big = [
        replace(m, doc_id=m.doc_id + k * 10_000_000, message_id=f"{k}-{m.message_id}",
                in_reply_to="", refs=(), subject=f"{m.subject} {k}")
        for k in range(copies)
        for m in mails
    ]  # fmt: skip
    t0 = time.perf_counter()
    threads.assign(big)
    return len(big), time.perf_counter() - t0


def thread_counts(ctx: Services) -> dict:
    report = thread_update.rebuild(ctx.store)  # computed on open already: drops nothing new
    mails, seconds = scaled_seconds(ctx)
    return {
        "scaled_mails": mails,
        "scaled_assign_seconds": seconds,
        "mails": report.mails,
        "threads_2plus": report.threads,
        "from_headers": report.by_headers,
        "from_subject": report.by_subject,
        "rebuild_seconds": report.seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, default=Path("/work/eval/home"))
    parser.add_argument("--set", type=Path, default=REPO / "data/qa/skilling_followups.jsonl")
    parser.add_argument("--out", default="followups")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="followups-") as tmp:
        before = copy_home(args.home, Path(tmp))
        run(open_services(Path(tmp)), args, before)


def copy_home(home: Path, into: Path) -> int:
    """The home's knowledge bank copied into `into`; its chunks before threads were computed."""
    source = sqlite3.connect(f"file:{home / 'knowledge.db'}?mode=ro", uri=True)
    target = sqlite3.connect(into / "knowledge.db")
    source.backup(target)
    chunks = target.execute("SELECT count(*) FROM chunks").fetchone()[0]
    source.close()
    target.close()
    return int(chunks)


def run(ctx: Services, args: argparse.Namespace, before: int) -> None:
    convs = [json.loads(line) for line in args.set.read_text().splitlines() if line.strip()]
    log(f"{len(convs)} conversations on {args.home} ({before:,} chunks)")
    rows = [run_one(ctx, c) for c in convs]
    n = len(rows)
    share = {
        k: sum(r[k] for r in rows) / n
        for k in (
            "alone",
            "rewritten",
            "rewritten_focus",
            "rewritten_focus3",
            "app",
            "app_filters",
        )  # fmt: skip
    }
    share["first_found"] = sum(r["first_found"] for r in rows) / n
    counts = {"chunks_before": before, "chunks_after": ctx.store.count_chunks(),
              **thread_counts(ctx)}  # fmt: skip
    print_table(
        f"Follow-up's mail in the top {TOP} ({n} conversations)",
        ["asked", "share"],
        [
            ["alone", share["alone"]],
            ["rewritten (rules)", share["rewritten"]],
            ["rewritten + first source's thread first (shipped)", share["rewritten_focus"]],
            ["rewritten + first 3 sources' threads first", share["rewritten_focus3"]],
            ["the app's follow-up path (focused answerer), its candidates", share["app"]],
            ["the same with the rewritten question's filters", share["app_filters"]],
            ["(first question's mail in its top 3)", share["first_found"]],
        ],
    )
    print_table("Threads", ["", "count"], [[k, v] for k, v in counts.items()])
    data = {"top": TOP, "conversations": n, "share": share, "threads": counts, "rows": rows}
    path = write_results(args.out, data, {"home": args.home, "set": args.set})
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
