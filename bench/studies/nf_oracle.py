"""How far can the reader's margins take "not found" on one question set, with bars chosen on
that very set (an oracle: in-sample, the best any bar could do there)? Issue 48 asks, on the
second mailbox, "not found" on ≥ 0.7 of the unanswerable questions while ≤ 0.1 of the
answerable ones. For each score below, every threshold is tried and the one calling most
unanswerable questions "not found" with at most --cap of the answerable ones is kept:

- quote: the reader's margin log p(Yes) − log p(No) on the quote the app shows;
- best line: the highest margin of the quote and its next candidate lines (the reader finds no
  line that states the answer);
- each of them or'ed with the path without a model saying "not found" (bench/evidence_lines.py's
  band "none": a kind asked and none held), as the shipped design does.

The rows are bench/reader_fit.py's (one run over the set: every candidate judged), the
no-model verdicts bench/evidence_lines.py's rows for the same questions.

    python bench/studies/nf_oracle.py --rows /tmp/reader_fit/fossum.jsonl \
        --noreader bench/results/evidence_lines_places_after_fossum.json [--cap 0.1] [--out NAME]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common

from _common import _jsonl, print_table, write_results  # noqa: E402


def auc(pos: list[float], neg: list[float]) -> float:
    """P(a positive scores above a negative), ties half."""
    pairs = [(p > n) + 0.5 * (p == n) for p in pos for n in neg]
    return sum(pairs) / len(pairs) if pairs else float("nan")


def best_bar(rows: list[dict], score, extra: set[str], cap: float) -> dict:
    """The threshold t (not found: score < t, or the id in `extra`) calling most unanswerable
    rows not found with at most `cap` of the answerable ones."""
    unans = [r for r in rows if not r["answerable"]]
    ans = [r for r in rows if r["answerable"]]
    cuts = sorted({score(r) for r in rows}) + [float("inf")]
    best = {"threshold": None, "unanswerable": 0.0, "answerable": 0.0}
    for t in [float("-inf"), *cuts]:
        nf = {r["id"] for r in rows if score(r) < t or r["id"] in extra}
        a = sum(r["id"] in nf for r in ans) / len(ans)
        u = sum(r["id"] in nf for r in unans) / len(unans)
        if a <= cap and u > best["unanswerable"]:
            best = {"threshold": t, "unanswerable": u, "answerable": a}
    best["k"] = round(best["unanswerable"] * len(unans))
    best["n"] = len(unans)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=Path, required=True)
    parser.add_argument("--noreader", type=Path, required=True)
    parser.add_argument("--set", default="fossum")
    parser.add_argument("--cap", type=float, default=0.1)
    parser.add_argument("--out", default="nf_oracle")
    args = parser.parse_args()
    rows = list(_jsonl(args.rows))
    for r in rows:  # no line to judge: the path says "not found" whatever the bar
        r["quote_margin"] = -99.0 if r["quote_margin"] is None else r["quote_margin"]
    nr_rows = json.loads(args.noreader.read_text())["sets"][args.set]["rows"]
    noreader = {r["id"] for r in nr_rows if r.get("band") == "none"}

    def quote(r: dict) -> float:
        return r["quote_margin"]

    def best_line(r: dict) -> float:
        return max([r["quote_margin"], *(c["margin"] for c in r["candidates"])])

    results, table = {}, []
    for name, score in (("quote", quote), ("best line", best_line)):
        pos = [score(r) for r in rows if r["answerable"]]
        neg = [score(r) for r in rows if not r["answerable"]]
        for extra_name, extra in (("reader only", set()), ("or no-model none", noreader)):
            b = best_bar(rows, score, extra, args.cap)
            key = f"{name}, {extra_name}"
            results[key] = {**b, "auc": auc(pos, neg)}
            table.append([key, f"{auc(pos, neg):.3f}", f"{b['threshold']}",
                          f"{b['k']}/{b['n']} = {b['unanswerable']:.3f}",
                          f"{b['answerable']:.3f}"])  # fmt: skip
    print_table(
        f"not found, bars chosen on the set itself (answerable ≤ {args.cap})",
        ["score", "AUC", "bar", "unanswerable not found", "answerable not found"],
        table,
        f"{args.set}: {sum(r['answerable'] for r in rows)} answerable, "
        f"{sum(not r['answerable'] for r in rows)} unanswerable",
    )
    kept = [{"id": r["id"], "answerable": r["answerable"], "quote_margin": r["quote_margin"],
             "candidates": [c["margin"] for c in r["candidates"]]} for r in rows]  # fmt: skip
    data = {"set": args.set, "cap": args.cap, "results": results, "no_model_none": sorted(noreader),
            "rows": kept}  # fmt: skip
    write_results(args.out, data, vars(args))


if __name__ == "__main__":
    main()
