"""Mail as mail (issue 34): sender/date questions with filters read from their words against the
whole mailbox, explicit query terms, copies among `search` rows, filtered vs unfiltered latency.

    python bench/filters.py [--home /work/eval/home] [--mbox /tmp/skilling/skilling-j.mbox]
                            [--set data/qa/skilling_filters.jsonl] [--repeats 3]

The home is copied (it is never written); a home imported before names were kept (migration
0003_mail_terms) is re-read from --mbox, which only fills the names. Today is pinned to the set's
(2001-11-20). Writes bench/results/filters.json.
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"

# ruff: noqa: E402
import argparse
import json
import re
import shutil
import sqlite3
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

from _common import REPO, log, mean, percentile, print_table, write_results

from assistant.cli.listing import search_rows
from assistant.config import Settings
from assistant.home import open_home
from assistant.mail.query import MailQuery
from assistant.mail.reader import QueryReader
from assistant.mail.rows import MailRow, copy_keys, normalized_subject
from assistant.services import Services, open_services

TODAY = date(2001, 11, 20)
TOP = 3  # the answering mail counts as found in the first TOP rows
ROWS = 10  # rows a search lists


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=Path("/work/eval/home"))
    parser.add_argument("--mbox", type=Path, default=Path("/tmp/skilling/skilling-j.mbox"))
    parser.add_argument("--set", type=Path, default=REPO / "data/qa/skilling_filters.jsonl")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per question and path")
    parser.add_argument("--out", default="filters")
    return parser.parse_args()


def copy_home(src: Path, dst: Path, mbox: Path) -> Services:
    """A private copy of `src` (database by SQLite backup, indexes as files) opened with names."""
    home = open_home(dst)
    with sqlite3.connect(f"file:{src / 'knowledge.db'}?mode=ro", uri=True) as old:
        target = sqlite3.connect(home.knowledge_db)
        old.backup(target)
        target.close()
    if (src / "index").is_dir():
        shutil.copytree(src / "index", home.index_dir, dirs_exist_ok=True)
    settings = Settings()
    settings.rerank = "off"  # the fused order: what is measured is the filtering
    ctx = open_services(dst, settings)
    unnamed = ctx.store.db.execute(
        "SELECT count(*) FROM documents WHERE kind = 'email' AND sender_name IS NULL"
    ).fetchone()[0]
    if unnamed:
        log(f"{unnamed} mails without names: re-reading {mbox} (fills names only)")
        report = ctx.importer().run([mbox])
        assert report.added == 0, "the mbox is not the one this home was imported from"
    return ctx


def rows_for(ctx: Services, reader: QueryReader, query: MailQuery) -> list[MailRow]:
    """`search`'s rows: none when no mail meets the filters (as the command says so)."""
    if query.filters and not reader.count(query.filters):
        return []
    return search_rows(ctx, query, ROWS, "hybrid")[0]


def mail_of(ctx: Services, document_id: int) -> dict:
    return ctx.store.mail.mail(str(document_id))


def rank_of(ctx: Services, rows: list[MailRow], source: str) -> int | None:
    """1-based row of the answering mail, None when absent. A copy of it counts as the app
    tells copies apart (mail/rows.copy_keys: the content hash, or the same subject and first
    words where a folder recorded the Date or From differently): a row the app folds copies
    into stands for all of them (the keys hold the Message-ID, so the mail itself counts)."""
    keys = _copy_keys(ctx, "d.message_id = ?", [source])
    for row in rows:
        if keys & _copy_keys(ctx, "d.id = ?", [row.document_id]):
            return row.rank
    return None


def _copy_keys(ctx: Services, where: str, params: list) -> set[str]:
    """The copy keys of the mails `where` picks (through one chunk of each)."""
    chunks = ctx.store.db.execute(
        f"SELECT min(c.id) FROM chunks c JOIN documents d ON d.id = c.document_id WHERE {where} "
        "GROUP BY d.id",
        params,
    ).fetchall()
    refs = ctx.store.mail.refs([r[0] for r in chunks])
    return {key for ref in refs.values() for key in copy_keys(ref)}


# -- does a row meet the set's filters? checked on the stored mail, not with the app's SQL ------


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def meets(mail: dict, expected: dict) -> bool:
    day = mail["date"][:10]
    checks = [
        not expected.get("from") or _person(expected["from"], mail["sender"], mail["sender_name"]),
        not expected.get("to")
        or _person(expected["to"], mail["recipients"], mail["recipient_names"]),
        not expected.get("date_from") or day >= expected["date_from"],
        not expected.get("date_to") or day <= expected["date_to"],
        not expected.get("subject") or expected["subject"].lower() in mail["title"].lower(),
    ]
    return all(checks)


def _person(name: str, addresses: str, names: str) -> bool:
    """Every word of `name` among the words of the mail's names, or in its addresses."""
    words = _words(name)
    return words <= _words(names) or all(w in addresses.lower() for w in words)


def explicit_meets(mail: dict, terms: str) -> bool:
    """The set's `explicit` terms (from:ADDRESS date:DAY): the stored sender and day."""
    sender = re.search(r"from:(\S+)", terms)
    day = re.search(r"date:(\S+)", terms)
    ok = not sender or sender.group(1).lower() in mail["sender"].lower()
    return ok and (not day or mail["date"][:10] == day.group(1))


def terms_from(expected: dict, question: str) -> str:
    """Query terms built from the set's `filters` field, and the question's words."""
    parts = []
    for key in ("from", "to", "subject"):
        if expected.get(key):
            parts.append(f'{key}:"{expected[key]}"')
    if expected.get("date_from") or expected.get("date_to"):
        parts.append(f"date:{expected.get('date_from') or ''}..{expected.get('date_to') or ''}")
    words = re.sub(r"['\"?]", " ", question)
    return " ".join([*parts, words])


# -- copies among rows ----------------------------------------------------------------------------


def copies_among(ctx: Services, rows: list[MailRow]) -> tuple[int, int]:
    """(rows that copy a row above: the same sender, minute and subject, or the same subject and
    body start; rows whose body start alone is a row's above, whatever their subject: a looser
    count that also takes boilerplate bodies for copies)."""
    seen: set[tuple] = set()
    copies = loose = 0
    for row in rows:
        mail = mail_of(ctx, row.document_id)
        subject, body = normalized_subject(mail["title"]), " ".join(mail["body"].split())[:300]
        keys = {
            ("head", mail["sender"].lower(), mail["date"][:16], subject),
            ("text", subject, body),
        }
        copies += bool(keys & seen)
        loose += ("body", body) in seen
        seen |= keys | {("body", body)}
    return copies, loose


def chunk_rows_copies(ctx: Services, question: str) -> int:
    """The old `search` (top-10 chunks): rows that are another row's mail or a copy of it
    (as `copies_among` counts them)."""
    hits = ctx.retriever.search(question, ROWS)
    refs = ctx.store.mail.refs([h.chunk_id for h in hits])
    seen: set[str] = set()
    copies = 0
    for hit in hits:
        ref = refs[hit.chunk_id]
        mail = mail_of(ctx, ref.document_id)
        subject = normalized_subject(mail["title"])
        keys = {
            f"{mail['sender'].lower()}|{mail['date'][:16]}|{subject}",
            f"{subject}|{' '.join(mail['body'].split())[:300]}",
        }
        copies += bool(keys & seen)
        seen |= keys
    return copies


# -- the run ------------------------------------------------------------------------------------


def per_question(ctx: Services, q: dict) -> dict[str, Any]:
    words, off = QueryReader(ctx.store, TODAY, "words"), QueryReader(ctx.store, TODAY, "off")
    parsed = words.read(q["question"])
    with_rows = rows_for(ctx, words, parsed)
    without_rows = rows_for(ctx, off, off.read(q["question"]))
    built = words.read(terms_from(q["filters"], q["question"]))
    built_rows = rows_for(ctx, words, built)
    explicit = words.read(q["explicit"])
    explicit_rows = rows_for(ctx, words, explicit)
    match = [meets(mail_of(ctx, r.document_id), q["filters"]) for r in built_rows]
    return {
        "id": q["id"],
        "parsed": parsed.filters.describe(),
        "rank_with": rank_of(ctx, with_rows, q["source"]),
        "rank_without": rank_of(ctx, without_rows, q["source"]),
        "built_terms": built.filters.describe(),
        "built_rows": len(built_rows),
        "built_all_match": all(match),
        "built_rank": rank_of(ctx, built_rows, q["source"]),
        "explicit_rows": len(explicit_rows),
        "explicit_all_match": all(
            explicit_meets(mail_of(ctx, r.document_id), q["explicit"]) for r in explicit_rows
        ),
        "explicit_rank": rank_of(ctx, explicit_rows, q["source"]),
        "copies_rows": copies_among(ctx, with_rows)[0] + copies_among(ctx, without_rows)[0],
        "same_body_start_rows": copies_among(ctx, with_rows)[1]
        + copies_among(ctx, without_rows)[1],
        "copies_chunks": chunk_rows_copies(ctx, q["question"]),
        "rows_counted": len(with_rows) + len(without_rows),
        "date_exact": _date_exact(parsed, q["filters"]),
    }


def _date_exact(parsed: MailQuery, expected: dict) -> bool | None:
    """Whether the date read from the words is the set's range (None: the set has none)."""
    if not expected.get("date_from"):
        return None
    want = f"{expected['date_from']}..{expected['date_to']}"
    if expected["date_from"] == expected["date_to"]:
        want = expected["date_from"]
    return parsed.filters.as_dict().get("date") == [want]


def latency(ctx: Services, questions: list[dict], repeats: int) -> dict[str, float]:
    """p50 and p90 seconds of `search` (rows), filters read from the words vs none."""
    out: dict[str, float] = {}
    for mode in ("off", "words"):
        reader = QueryReader(ctx.store, TODAY, mode)
        times = []
        for _ in range(repeats):
            for q in questions:
                t0 = time.perf_counter()
                rows_for(ctx, reader, reader.read(q["question"]))
                times.append(time.perf_counter() - t0)
        name = "filtered" if mode == "words" else "unfiltered"
        out[f"{name}_p50_s"], out[f"{name}_p90_s"] = percentile(times, 50), percentile(times, 90)
    return out


def summary(results: list[dict]) -> dict[str, Any]:
    n = len(results)
    found = lambda key: sum(1 for r in results if r[key] is not None and r[key] <= TOP) / n  # noqa: E731
    dated = [r for r in results if r["date_exact"] is not None]
    return {
        "questions": n,
        "top3_with_filters": found("rank_with"),
        "top3_without_filters": found("rank_without"),
        "built_terms_all_rows_match": sum(r["built_all_match"] for r in results),
        "built_terms_top3": found("built_rank"),
        "built_terms_first": sum(r["built_rank"] == 1 for r in results) / n,
        "explicit_all_rows_match": sum(r["explicit_all_match"] for r in results),
        "explicit_first": sum(r["explicit_rank"] == 1 for r in results) / n,
        "explicit_mean_rows": mean(r["explicit_rows"] for r in results),
        "copies_among_rows": sum(r["copies_rows"] for r in results),
        "same_body_start_rows": sum(r["same_body_start_rows"] for r in results),
        "rows_counted": sum(r["rows_counted"] for r in results),
        "copies_among_old_chunk_rows": sum(r["copies_chunks"] for r in results),
        "old_chunk_rows_counted": n * ROWS,
        "dates_read_exactly": sum(bool(r["date_exact"]) for r in dated),
        "questions_with_dates": len(dated),
    }


def main() -> None:
    args = parse_args()
    questions = [json.loads(line) for line in args.set.read_text().splitlines() if line.strip()]
    with tempfile.TemporaryDirectory(prefix="filters-bench-") as tmp:
        ctx = copy_home(args.home, Path(tmp) / "home", args.mbox)
        log(f"{len(questions)} questions on a copy of {args.home}")
        results = [per_question(ctx, q) for q in questions]
        timing = latency(ctx, questions, args.repeats)
    totals = {**summary(results), **timing}
    print_table(
        f"{args.set.name}: the answering mail in the top {TOP} rows ({len(questions)} questions)",
        ["path", "top 3", "first", "every row matches"],
        [
            ["the question, no filters", totals["top3_without_filters"], None, None],
            ["the question, filters read from its words", totals["top3_with_filters"], None, None],
            ["terms from the set's `filters` + words", totals["built_terms_top3"],
             totals["built_terms_first"], f"{totals['built_terms_all_rows_match']}/{len(results)}"],
            ["the set's `explicit` terms", None, totals["explicit_first"],
             f"{totals['explicit_all_rows_match']}/{len(results)}"],
        ],
    )  # fmt: skip
    print_table(
        "search rows and latency",
        ["measure", "value"],
        [
            ["rows that copy a row above (mail rows)", totals["copies_among_rows"]],
            ["rows counted", totals["rows_counted"]],
            ["rows whose body start alone is a row's above", totals["same_body_start_rows"]],
            ["the same, old chunk rows (top 10 chunks)", totals["copies_among_old_chunk_rows"]],
            ["dates read exactly / questions with dates",
             f"{totals['dates_read_exactly']}/{totals['questions_with_dates']}"],
            ["search p50 s, unfiltered", timing["unfiltered_p50_s"]],
            ["search p50 s, filtered", timing["filtered_p50_s"]],
        ],
    )  # fmt: skip
    data = {"summary": totals, "questions": results, "today": TODAY.isoformat()}
    print(f"wrote {write_results(args.out, data, {k: str(v) for k, v in vars(args).items()})}")


if __name__ == "__main__":
    main()
