"""The reader's next candidate lines judged only when the quote's margin is below the "not found"
bar (issue 47: the candidates' verdicts are more than half of a covered question's verdict time
at 1.5B), replayed over bench/reader_fit.py's kept rows: no model runs.

judge.py asked for two more verdicts whenever the quote was not confirmed ("every", until
75eecaa shipped "lazy"). Between the bars (none ≤ the quote's margin < confirm) those verdicts
can only move the quote to a candidate that reaches the confirm bar: "not found" needs every
margin, the quote's among them, below `none`.
This replays, at the shipped bars, that rule against the lazy one (candidates only below
`none`) on every set reader_fit kept, with the path without a reader deciding where the reader
is unsure (bench/funnel.py's "noreader" rows, as reader_fit's "reader + sentence"), and the
verdicts' time each rule spends (the kept rows' timings: the quote's verdict, then the two
candidates' when they are judged).

    python bench/studies/lazy_candidates.py [--work /tmp/reader_fit3] \
        [--today /tmp/funnel_nr --today /tmp/funnel_nr2 ...] [--out lazy_candidates]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

from _common import _jsonl, log, print_table, write_results  # noqa: E402
from reader_fit import SETS, key, metrics, outcome, today_rows  # noqa: E402

from assistant.answer.judge import DEFAULT_BARS  # noqa: E402

RULES = ("every", "lazy")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/reader_fit3"))
    parser.add_argument("--today", type=Path, action="append")
    parser.add_argument("--out", default="lazy_candidates")
    args = parser.parse_args()
    args.today = args.today or [Path(f"/tmp/funnel_nr{s}") for s in ("", "2", "3")]
    return args


def judges_candidates(row: dict, rule: str) -> bool:
    """Whether the rule asks for the candidates' verdicts on this row."""
    first = row["quote_margin"]
    if first is None or first >= DEFAULT_BARS.confirm or not row["candidates"]:
        return False
    return rule == "every" or DEFAULT_BARS.doubts(first)


def judged(row: dict, rule: str, today: dict | None) -> tuple[str, bool | None]:
    """(verdict, facts shown) under the shipped bars, as reader_fit replays the rule."""
    bars = (DEFAULT_BARS.confirm, DEFAULT_BARS.none)
    return outcome(row, *bars, today, every=rule == "every")


def seconds(row: dict, rule: str) -> float:
    if row["quote_margin"] is None:
        return 0.0
    return row["t_quote"] + (row["t_candidates"] if judges_candidates(row, rule) else 0.0)


def per_set(rows: list[dict], today: dict) -> dict:
    rows = [r for r in rows if key(r) in today]
    shown = {rule: [judged(r, rule, today[key(r)]) for r in rows] for rule in RULES}
    out: dict = {"n": len(rows)}
    for rule in RULES:
        out[rule] = metrics([(r, *o) for r, o in zip(rows, shown[rule], strict=True)]) | {
            "verdict_s_mean": sum(seconds(r, rule) for r in rows) / len(rows) if rows else None,
            "candidates_judged": sum(judges_candidates(r, rule) for r in rows),
        }
    out["changed"] = [
        {"id": r["id"], "answerable": r["answerable"], "quote_margin": r["quote_margin"],
         "every": every, "lazy": lazy}
        for r, every, lazy in zip(rows, shown["every"], shown["lazy"], strict=True)
        if every != lazy
    ]  # fmt: skip
    return out


def main() -> None:
    args = parse_args()
    results = {}
    for name in SETS:
        path = args.work / f"{name}.jsonl"
        today = today_rows(args, name)
        if not path.exists() or not today:
            log(f"{name}: no kept rows or no noreader rows, left out")
            continue
        results[name] = per_set(_jsonl(path), today)
    table = []
    for name, r in results.items():
        for rule in RULES:
            m = r[rule]
            table.append([name, rule, r["n"], m["candidates_judged"], m["verdict_s_mean"],
                          m["shown_vs_top3"], m["wrong_unmarked"]["k"], m["right_marked"]["k"],
                          m["not_found_unanswerable"]["k"], m["not_found_answerable"]["k"],
                          len(r["changed"]) if rule == "lazy" else ""])  # fmt: skip
    print_table(
        f"candidates judged whenever unconfirmed (every) vs below none (lazy), {DEFAULT_BARS}",
        ["set", "rule", "n", "cand. judged", "verdicts s", "shown/top3", "wrong unmarked",
         "right marked", "NF unans.", "NF answ.", "changed"],
        table,
    )  # fmt: skip
    bars = {"confirm": DEFAULT_BARS.confirm, "none": DEFAULT_BARS.none}
    print(f"wrote {write_results(args.out, {'bars': bars, 'sets': results}, vars(args))}")


if __name__ == "__main__":
    main()
