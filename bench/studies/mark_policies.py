"""Which answers to mark (issue 31: wrong shown unmarked ≤ 5%, right marked ≤ 15%): the two
signals the answer path has, played back over saved runs, no model run here.

The signals, per question answered (not "not found"): the line scorer's band
(bench/evidence_lines.py rows: "answer" over its calibrated bar, else "weak") and the model's
reading (bench/funnel.py rows: the shown answer says "Not confirmed" when the model's sentence
does not point to the quote, answer/shape.py `agrees`). Policies: "model" (today: marked when
the model does not confirm), "scorer" (marked under the scorer's bar), "both" (marked only when
both fail) and "either" (marked when either fails). A question is right when its facts are shown.

    python bench/studies/mark_policies.py --set real=WORK/real-quote.jsonl:evidence_dates_after_real
        [--set NAME=FUNNEL_ROWS:EVIDENCE_RESULTS[:EVIDENCE_SET]] [--out mark_policies]

EVIDENCE_RESULTS names a bench/results file of bench/evidence_lines.py run on the same checkout
as the funnel rows. Writes bench/results/NAME.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

from _common import QA_DIR, REPO, print_table, write_results  # noqa: E402

from assistant.answer.shape import first_sentence  # noqa: E402
from assistant.answer.text import asked_kinds, kind_terms  # noqa: E402

WEAK = "Not confirmed"  # the start of answer/shape.py's WEAK line
POLICIES = {
    "model": lambda scorer_weak, unconfirmed, disagrees: unconfirmed,
    "scorer": lambda scorer_weak, unconfirmed, disagrees: scorer_weak,
    "both": lambda scorer_weak, unconfirmed, disagrees: scorer_weak and unconfirmed,
    "either": lambda scorer_weak, unconfirmed, disagrees: scorer_weak or unconfirmed,
    # the model's silence is no evidence, its naming another date or figure is
    "scorer or disagrees": lambda scorer_weak, unconfirmed, disagrees: scorer_weak or disagrees,
}


def questions() -> dict[str, str]:
    """Every question of data/qa by its id."""
    out = {}
    for path in sorted(QA_DIR.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line) if line.strip() else {}
            if "id" in row and "question" in row:
                out.setdefault(row["id"], row["question"])
    return out


def disagrees(row: dict, question: str) -> bool:
    """The model's first sentence names a term of the kind asked (a date for "when" …) and
    none of them stands in the lines shown."""
    kinds = asked_kinds(question) - {"place"}
    if not kinds:
        return False
    said = kind_terms(first_sentence(row.get("draft") or ""), question, kinds)
    return bool(said) and not said & kind_terms(" ".join(row["evidence"]), question, kinds)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", required=True,
                        help="NAME=FUNNEL_ROWS:EVIDENCE_RESULTS[:EVIDENCE_SET]")  # fmt: skip
    parser.add_argument("--out", default="mark_policies")
    return parser.parse_args()


def played(funnel: list[dict], bands: dict[str, str]) -> dict[str, dict]:
    """Per policy: wrong answers shown unmarked (of every question) and right answers marked."""
    out, asked = {}, questions()
    for name, marks in POLICIES.items():
        wrong_unmarked = right = right_marked = 0
        for row in funnel:
            if row["not_found"]:
                continue
            question = asked.get(row["id"], "")
            marked = marks(bands.get(row["id"]) != "answer", WEAK in row["answer"],
                           disagrees(row, question))  # fmt: skip
            if row["answerable"] and row["facts_shown"]:
                right += 1
                right_marked += marked
            else:
                wrong_unmarked += not marked
        out[name] = {
            "wrong_unmarked": {"k": wrong_unmarked, "n": len(funnel)},
            "right_marked": {"k": right_marked, "n": right},
        }
    return out


def main() -> None:
    args = parse_args()
    results, rows = {}, []
    for item in args.set:
        name, spec = item.split("=", 1)
        funnel_path, evidence, *rest = spec.split(":")
        funnel = [json.loads(x) for x in Path(funnel_path).read_text().splitlines() if x.strip()]
        sets = json.loads((REPO / "bench" / "results" / f"{evidence}.json").read_text())["sets"]
        bands = {r["id"]: r["band"] for r in sets[rest[0] if rest else name]["rows"]}
        results[name] = played(funnel, bands)
        for policy, r in results[name].items():
            w, m = r["wrong_unmarked"], r["right_marked"]
            rows.append([f"{name}/{policy}", f"{w['k']}/{w['n']}", w["k"] / w["n"],
                         f"{m['k']}/{m['n']}", m["k"] / max(m["n"], 1)])  # fmt: skip
    columns = ["set/policy", "wrong unmarked", "share", "right marked", "share"]
    print_table("marks played back over saved runs", columns, rows)
    print(f"wrote {write_results(args.out, {'sets': results}, {'set': args.set})}")


if __name__ == "__main__":
    main()
