"""Where the line choice loses an answer's facts (issue 31): for each question with must_contain
facts, the shipped ask path's chunks and quote (Answerer.quote: read, retrieve, rerank, then
LineFinder.find; no LLM), and whether the facts stand in the chunks' text ("top3") and in the
evidence lines the user is shown as support (the quote's lines and the 'also' line: "evidence").
A question whose facts are in the chunks but not in the evidence is classed by why:

- header: the facts stand only in a chunk's header line (From | Date | Subject), no line has them
- split: no line holds them all, two neighbouring lines of a chunk do
- apart: no line (nor pair) holds them all, but each fact stands in some line
- dropped: a fact stands in no line: the splitter left it out or cut it
- same mail / other mail: a line holds them, but another line of the quoted mail (or another
  mail's line) was chosen; `rank` is the best such line's place among the scored lines

and the line that was shown first is typed (attribution, header field, quoted, short, text).
Questions marked unanswerable count only for "not found" (its share of them, beside its share of
the answerable ones), and an answerable question whose quote is given as the answer (band
"answer") without the facts is "wrong as answer".

    python bench/evidence_lines.py --home H --sets demo,holdout [--out NAME]
    python bench/evidence_lines.py --compare before.json after.json

Another commit's answer path is measured by this file copied into a worktree of that commit and
run there (bench/_common.py puts a bench's own checkout first; the results name the package they
ran: "code"), with --out an absolute path; --compare prints two runs side by side. Writes
bench/results/NAME.json.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import QA_DIR, log, print_table, write_results  # noqa: E402
from _funnel_worker import has, is_source  # noqa: E402

SETS = {
    "demo": [QA_DIR / "mail_qa.jsonl", QA_DIR / "notes_qa.jsonl"],
    "holdout": [QA_DIR / "evidence_holdout.jsonl"],
    "real": [QA_DIR / "skilling_qa.jsonl"],
    "new": [QA_DIR / "skilling_new.jsonl"],  # the dev mailbox's later questions
    "fossum": [QA_DIR / "fossum_qa.jsonl"],  # the second mailbox (data/eval)
}
# what a shown line looks like when it cannot answer (typed for the report only)
_ATTRIBUTION = re.compile(
    r"(?:\bon\s+\d{1,2}/\d{1,2}/\d{2,4}|\bwrote:\s*$|\d{1,2}:\d{2}(?::\d{2})?\s*[AP]M\s*$)",
    re.IGNORECASE,
)
_FIELD = re.compile(r"(?:^|\s)(?:from|to|cc|bcc|sent|date|subject)\s*:", re.IGNORECASE)
_ADDRESS = re.compile(r"@|\w/\w+/\w+")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, help="an imported home (its line vectors are stored)")
    parser.add_argument("--sets", default="demo,holdout", help=f"of {', '.join(SETS)}")
    parser.add_argument(
        "--compare", type=Path, nargs=2, help="two results files to set side by side"
    )
    parser.add_argument("--out", default="evidence_lines")
    return parser.parse_args()


def line_type(text: str, quoted: bool) -> str:
    if _ATTRIBUTION.search(text) and len(text.split()) <= 14:
        return "attribution"
    if _FIELD.match(text) or (_FIELD.search(text) and _ADDRESS.search(text)):
        return "header field"
    if quoted:
        return "quoted"
    return "short" if len(text.split()) < 6 else "text"


def why_lost(found, records, must: list[str]) -> dict:
    """Why the facts in the chunks are not in the evidence (see the module's docstring)."""
    from assistant.answer.evidence import mail_key
    from assistant.answer.lines import mail_lines

    best = found.ranked[0][0] if found.ranked else None
    shown = {"best_type": line_type(best.line.text, best.line.quoted) if best else "none",
             "best_line": best.line.text[:200] if best else ""}  # fmt: skip
    for rank, (c, _) in enumerate(found.ranked):
        if has(c.line.text, must):
            same = best is not None and mail_key(c.record) == mail_key(best.record)
            return {"why": "same mail" if same else "other mail", "rank": rank,
                    "good_line": c.line.text[:200], **shown}  # fmt: skip
    for r in records:
        lines = [x.text for x in mail_lines(r.text)]
        if any(has(f"{a} {b}", must) for a, b in zip(lines, lines[1:], strict=False)):
            return {"why": "split", **shown}
    for r in records:
        head, _, body = r.text.partition("\n")
        if has(head, must) and not has(body, must):
            return {"why": "header", **shown}
    texts = [c.line.text for c, _ in found.ranked]
    apart = all(any(has(t, [m]) for t in texts) for m in must)
    return {"why": "apart" if apart else "dropped", **shown}


def run_set(answerer, embedder, paths: list[Path], data: Path) -> list[dict]:
    rows = []
    for path in paths:
        for text in path.read_text().splitlines():
            q = json.loads(text) if text.strip() else {}
            must = list(q.get("must_contain") or [])
            answerable = q.get("answerable", True) is not False
            if not q or (answerable and not must):
                continue
            vector = embedder.embed_batch([q["question"]])[0]
            hits, found = answerer.quote(q["question"], vector)
            if not answerable:  # asked of mail that does not hold it: only "not found" counts
                rows.append({"id": q["id"], "answerable": False, "band": found.band})
                continue
            records = [h.record for h in hits]
            evidence = [e.sentence for e in (*found.lines, *found.also)]
            row = {
                "id": q["id"], "type": q.get("type", ""),
                "source_top3": any(is_source(r, q.get("source") or "", data) for r in records),
                "facts_top3": bool(has("\n".join(r.text for r in records), must)),
                "facts_evidence": bool(evidence) and bool(has(" ".join(evidence), must)),
                "facts_best": bool(found.ranked) and bool(has(found.best_line, must)),
                "band": found.band, "evidence": evidence,
            }  # fmt: skip
            if row["facts_top3"] and not row["facts_evidence"]:
                row.update(why_lost(found, records, must))
            rows.append(row)
    return rows


def _share(rows: list[dict], hit) -> dict:
    k = sum(bool(hit(r)) for r in rows)
    return {"k": k, "n": len(rows), "rate": k / len(rows) if rows else None}


def summary(rows: list[dict]) -> dict:
    unanswerable = [r for r in rows if r.get("answerable") is False]
    rows = [r for r in rows if r.get("answerable") is not False]
    top3 = sum(r["facts_top3"] for r in rows)
    evidence = sum(r["facts_evidence"] for r in rows)
    lost = [r for r in rows if "why" in r]
    return {
        "questions": len(rows),
        "facts_top3": top3 / len(rows) if rows else None,
        "facts_evidence": evidence / len(rows) if rows else None,
        "facts_best": sum(r["facts_best"] for r in rows) / len(rows) if rows else None,
        "ratio": evidence / top3 if top3 else None,
        "lost": len(lost),
        "why": dict(Counter(r["why"] for r in lost).most_common()),
        "best_type": dict(Counter(r["best_type"] for r in lost).most_common()),
        "not_found_unanswerable": _share(unanswerable, lambda r: r["band"] == "none"),
        "not_found_answerable": _share(rows, lambda r: r["band"] == "none"),
        # the quote given as the answer (no mark, no "not found") without the facts
        "wrong_as_answer": _share(
            rows, lambda r: r["band"] == "answer" and not r["facts_evidence"]
        ),
    }


def _table(title: str, columns: dict[str, dict]) -> None:
    """One row per set and run: the shares, the ratio and the reasons."""
    out = []
    for label, sets in columns.items():
        for name, s in sets.items():
            nf = [
                s.get(k) or {"k": "–", "n": "–"}
                for k in ("not_found_unanswerable", "not_found_answerable", "wrong_as_answer")
            ]
            out.append([f"{name}/{label}", s["questions"], s["facts_top3"], s["facts_evidence"],
                        s["facts_best"], s["ratio"], s["lost"],
                        *(f"{x['k']}/{x['n']}" for x in nf),
                        ", ".join(f"{k} {v}" for k, v in s["why"].items())])  # fmt: skip
    print_table(title, ["set/run", "n", "top3", "evidence", "best line", "ev/top3", "lost",
                        "not found: unans.", "ans.", "wrong as answer", "why"], out)  # fmt: skip


def main() -> None:
    args = parse_args()
    if args.compare:
        runs = {p.stem: json.loads(p.read_text()) for p in args.compare}
        _table(
            "evidence lines, side by side",
            {k: {n: s["summary"] for n, s in v["sets"].items()} for k, v in runs.items()},
        )
        return
    import assistant
    from assistant.services import open_services

    ctx = open_services(args.home)
    answerer = ctx.answerer()
    data = Path(__file__).resolve().parents[1] / "data"
    results = {}
    for name in args.sets.split(","):
        log(f"set {name}")
        rows = run_set(answerer, ctx.embedder, SETS[name], data)
        results[name] = {"summary": summary(rows), "rows": rows}
    _table(
        "evidence lines: facts in the chunks and in the lines shown",
        {Path(args.out).name: {n: r["summary"] for n, r in results.items()}},
    )
    code = str(Path(assistant.__file__).resolve().parents[1])
    path = write_results(args.out, {"code": code, "sets": results}, vars(args))
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
