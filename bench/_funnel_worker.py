"""One design of bench/funnel.py: answers a question file on a home with the answer path of the
code in --code (this checkout, or a worktree of an earlier commit: "today's path"), and writes
one JSON line per question with what each stage of the funnel holds.

Self-contained on purpose: it imports only what every version of the package has
(open_services, the Answerer's events), so an older checkout runs it unchanged.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path


def _paths(code: Path) -> None:
    here = Path(__file__).resolve().parent
    sys.path[:] = [str(code), *(p for p in sys.path if Path(p or ".").resolve() != here)]


_REFUSAL = re.compile(
    r"\b(could not|couldn't|can't|cannot|unable to)\s+(find|see|locate)|\bnot found\b"
    r"|\bno (information|mention|record)\b",
    re.IGNORECASE,
)


def has(text: str, expected: list[str]) -> bool | None:
    if not expected:
        return None
    flat = " ".join(text.lower().split())
    return all(" ".join(e.lower().split()) in flat for e in expected)


def is_source(record, source: str, data: Path) -> bool:
    if not source:
        return False
    if record.kind == "email":
        return record.message_id == source
    return bool(record.note_path) and Path(record.note_path).resolve() == (data / source).resolve()


def answer(pipe, layers, row: dict, data: Path) -> dict:
    started = time.perf_counter()
    events = list(pipe.answer(row["question"], layers))
    wall = time.perf_counter() - started
    by = {type(e).__name__: e for e in events}
    ordered = by["ChunksOrdered"].chunk_ids if "ChunksOrdered" in by else []
    done = by["AnswerDone"]
    records = pipe.store.chunk_records(ordered)
    must = list(row.get("must_contain") or [])
    draft = "".join(e.text for e in events if type(e).__name__ == "TokenStreamed").strip()
    evidence = [e.sentence for e in done.evidence]
    not_found = bool(getattr(done, "not_found", False)) or bool(_REFUSAL.search(done.answer))
    t = done.timings
    return {
        "id": row.get("id"),
        "answerable": row.get("answerable", True) is not False,
        "type": row.get("type", ""),
        "source_top3": any(is_source(r, row.get("source") or "", data) for r in records),
        "facts_top3": has("\n".join(r.text for r in records), must),
        "facts_evidence": has(" ".join(evidence), must) if evidence else (False if must else None),
        "facts_draft": has(draft, must),
        "facts_shown": has(done.answer, must),
        "marked": not done.supported,
        "not_found": not_found,
        "quote_s": t.get("quote", t.get("ttft")),
        "ttft_s": t.get("ttft"),
        "total_s": t.get("total", wall),
        "answer": done.answer,
        "evidence": evidence,
        "draft": draft,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--code", type=Path, required=True)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--questions", type=Path, nargs="+", required=True)
    parser.add_argument("--data", type=Path, required=True, help="where note sources lie")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    _paths(args.code.resolve())
    from assistant.services import open_services

    try:
        from assistant.answer.answerer import NO_CACHE
    except ImportError:  # the answer path before the answer/ package
        from assistant.answer import NO_CACHE

    ctx = open_services(args.home)
    # two workers run at once, one thread each: [llm] n_threads set, so a question does not
    # take the cores the other worker is using (llm/cores.py), whatever the checkout
    ctx.settings.llm.n_threads = 1
    pipe = ctx.answerer()
    rows = [json.loads(x) for q in args.questions for x in q.read_text().splitlines() if x.strip()]
    with args.out.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(answer(pipe, NO_CACHE, row, args.data), ensure_ascii=False))
            out.write("\n")
            out.flush()


if __name__ == "__main__":
    main()
