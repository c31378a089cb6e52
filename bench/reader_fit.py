"""The reader's bars (answer/judge.py), fitted on one half of the fit sets and reported on the
other half and on sets no rule was read from, in one run.

For each question, the answer path's quote (retrieval, selection, the line scorer: no model) is
judged by the reader: the margin log p(Yes) − log p(No) that the quote states the answer, and the
same for each next candidate line (answer/judge.py next_candidates), with whether each of those
quotes, shown, holds the question's facts. Every candidate is judged, whatever the quote's
margin, so that any pair of bars can be replayed without the model: the verdict (confirmed,
moved, unconfirmed = marked, not found), what is shown and whether it is right. The bars are
chosen on half "a" of the fit sets (the demo questions, held-out, the dev mailbox's earlier
questions; the `half` field, else alternate rows), never on the reporting sets (the dev mailbox's
new questions, the second mailbox). Timings: the reader's time for the quote's verdict, and for
the candidates when the quote is not confirmed (the model's threads as a question gets them).

    python bench/reader_fit.py [--sets demo,holdout,real,new] [--work DIR] [--summarize]
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    QA_DIR,
    REPO,
    _jsonl,
    cli_import,
    default_eval_dir,
    log,
    percentile,
    print_table,
    write_results,
)
from _funnel_worker import has, is_source  # noqa: E402

# set: (home kind, question files)
SETS = {
    "demo": ("demo", [QA_DIR / "mail_qa.jsonl", QA_DIR / "notes_qa.jsonl"]),
    "holdout": ("demo", [QA_DIR / "evidence_holdout.jsonl"]),
    "real": ("real", [QA_DIR / "skilling_qa.jsonl"]),
    "new": ("real", [QA_DIR / "skilling_new.jsonl"]),
    "fossum": ("fossum", [QA_DIR / "fossum_qa.jsonl"]),  # the second mailbox (data/eval/)
}
FIT_SETS = ("demo", "holdout", "real")  # half "a" of these fits; their half "b" reports
NO_QUOTE = -9.0  # a margin below every bar: the question had no quote to judge
CONFIRM_GRID = [x / 4 for x in range(-16, 13)]
NONE_GRID = [x / 4 for x in range(-32, 5)]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="demo,holdout,real,new")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--work", type=Path, default=Path("/tmp/reader_fit"))
    parser.add_argument(
        "--eval-dir",
        type=Path,
        default=default_eval_dir(),
        help="holds mail/skilling-j.mbox.gz and mail/fossum-d.mbox.gz",
    )
    parser.add_argument("--real-home", type=Path, help="an imported dev-mailbox home to copy")
    parser.add_argument("--summarize", action="store_true", help="replay the saved rows only")
    parser.add_argument(
        "--today",
        type=Path,
        nargs="*",
        default=[],
        help="folders of bench/funnel.py's noreader rows (SET-noreader.jsonl)",
    )
    parser.add_argument("--out", default="reader_fit")
    return parser.parse_args()


def home_for(kind: str, args: argparse.Namespace) -> Path:
    home = args.work / f"home-{kind}"
    if home.exists():
        return home
    if kind == "real" and args.real_home:
        shutil.copytree(args.real_home, home, ignore=shutil.ignore_patterns("cache", "run"))
        return home
    if kind == "fossum":
        mbox = args.work / "fossum-d.mbox"
        with gzip.open(args.eval_dir / "mail" / "fossum-d.mbox.gz") as src, mbox.open("wb") as dst:
            shutil.copyfileobj(src, dst)
        cmd = [sys.executable, "-m", "assistant.cli", "--home", str(home), "import", str(mbox)]
        subprocess.run(cmd, check=True, capture_output=True, cwd=REPO)
        return home
    return cli_import(home, kind, args.work, args.eval_dir)


def questions(files: list[Path]) -> list[dict]:
    rows = [row for f in files for row in _jsonl(f)]
    for i, row in enumerate(rows):
        row.setdefault("half", "a" if i % 2 == 0 else "b")
    return rows


def run_set(name: str, args: argparse.Namespace) -> None:
    from assistant.answer.judge import (
        candidate_excerpt,
        next_candidates,
        promoted,
        quote_excerpt,
    )
    from assistant.answer.shape import shown
    from assistant.services import open_services

    kind, files = SETS[name]
    ctx = open_services(home_for(kind, args))
    ctx.settings.models.reader = args.model
    answerer, reader = ctx.answerer(), ctx.judge
    out_path = args.work / f"{name}.jsonl"
    done = set(kept_rows(out_path))
    with out_path.open("a", encoding="utf-8") as out:
        for row in questions(files):
            if row["id"] in done:
                continue
            q, must = row["question"], list(row.get("must_contain") or [])
            vector = ctx.embedder.embed_batch([q])[0]
            hits, found = answerer.quote(q, vector)
            texts = [h.record.text for h in hits]
            started = time.perf_counter()
            first = reader.states(q, [quote_excerpt(found)])[0] if found.lines else None
            t_quote = time.perf_counter() - started
            others = next_candidates(found, q) if found.lines else []
            started = time.perf_counter()
            margins = reader.states(q, [candidate_excerpt(c) for c in others]) if others else []
            t_cands = time.perf_counter() - started
            record = {
                "id": row["id"],
                "set": name,
                "half": row["half"],
                "answerable": row.get("answerable", True) is not False,
                "facts_top3": has("\n".join(texts), must),
                "source_top3": any(
                    is_source(h.record, row.get("source") or "", REPO / "data") for h in hits
                ),
                "scorer_band": found.band,
                "quote_facts": has(shown(found), must) if found.lines else False,
                "quote_margin": first,
                "candidates": [
                    {
                        "margin": m,
                        "facts": has(shown(promoted(found, c, q)), must),
                        "line": c.line.text[:160],
                    }
                    for c, m in zip(others, margins, strict=True)
                ],
                "t_quote": t_quote,
                "t_candidates": t_cands,
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            out.flush()
            log(
                f"{name} {row['id']}: quote {first if first is None else round(first, 2)} "
                f"({t_quote:.1f} s), candidates {[round(m, 2) for m in margins]} ({t_cands:.1f} s)"
            )


def outcome(
    r: dict, confirm: float, none: float, today: dict | None = None, every: bool = False
) -> tuple[str, bool | None]:
    """(verdict, facts shown) under the bars, as answer/judge.py decides: the candidates count
    only where the quote's margin is below `none` (`every`: wherever the quote is not
    confirmed, the rule before bench/results/lazy_candidates.json). Between the bars the reader
    is unsure: with `today` (the same question's row of the path without a reader,
    bench/funnel.py's "noreader"), the writer's sentence decides as it does there ("sentence"
    confirmed, "marked", or "not found"); without, the quote is marked ("unconfirmed")."""
    from assistant.answer.judge import Bars, decide

    first, cands, bars = r["quote_margin"], r["candidates"], Bars(confirm, none, 0.0)
    if first is None:
        return "not found", None
    judged = [c["margin"] for c in cands] if every or bars.doubts(first) else []
    verdict, best = decide(first, judged, bars)
    if verdict == "confirmed":
        return "confirmed", r["quote_facts"]
    if verdict == "moved":
        return "moved", cands[best]["facts"]
    if verdict == "not found":
        return "not found", None
    if today is None:
        return "unconfirmed", r["quote_facts"]
    if today["not_found"]:
        return "not found", None
    return ("marked" if today["marked"] else "sentence"), today["facts_shown"]


UNMARKED = ("confirmed", "moved", "sentence")
MARKED = ("unconfirmed", "marked")


def rate(k: int, n: int) -> dict:
    from funnel import wilson

    return {"rate": k / n if n else None, "k": k, "n": n, "ci95": wilson(k, n)}


def metrics(judged: list[tuple[dict, str, bool | None]]) -> dict:
    """The funnel's figures over (row, verdict, facts shown) triples."""
    factual = [x for x in judged if x[0]["answerable"] and x[0]["facts_top3"] is not None]
    right = [x for x in factual if x[2]]
    wrong = [x for x in judged if x[1] in UNMARKED and (not x[0]["answerable"] or x[2] is False)]
    answerable = [x for x in judged if x[0]["answerable"]]
    unanswerable = [x for x in judged if not x[0]["answerable"]]
    top3 = sum(1 for x in factual if x[0]["facts_top3"])
    nf = [x for x in judged if x[1] == "not found"]
    return {
        "wrong_unmarked": rate(len(wrong), len(judged)),
        "right_marked": rate(sum(1 for x in right if x[1] in MARKED), len(right)),
        "not_found_unanswerable": rate(sum(x in nf for x in unanswerable), len(unanswerable)),
        "not_found_answerable": rate(sum(x in nf for x in answerable), len(answerable)),
        "shown_vs_top3": len(right) / top3 if top3 else None,
        "verdicts": dict(Counter(x[1] for x in judged)),
    }


def replay(rows: list[dict], bars: tuple[float, float], today: dict | None) -> list[tuple]:
    """Each row's (row, verdict, facts shown) under `bars`; `today`: rows by id, or None."""
    if today is not None:
        rows = [r for r in rows if key(r) in today]
    return [(r, *outcome(r, *bars, today.get(key(r)) if today else None)) for r in rows]


def key(row: dict) -> str:
    """A question's key across sets (two sets may number their questions alike)."""
    return f"{row['set']}/{row['id']}"


def as_today(rows: list[dict], today: dict) -> list[tuple]:
    """The path without a reader, as it answered (bench/funnel.py's rows)."""
    out = []
    for r in rows:
        t = today.get(key(r))
        if t is not None:
            verdict = "not found" if t["not_found"] else "marked" if t["marked"] else "sentence"
            out.append((r, verdict, t["facts_shown"] if verdict != "not found" else None))
    return out


def fit(
    rows: list[dict], today: dict | None, nones: list[float] | None = None
) -> tuple[float, float]:
    """The bars on the fit rows: wrong answers shown unmarked ≤ 0.05 and "not found" on ≤ 0.1
    of answerable questions, then the most unanswerable questions found to be so less right
    answers marked; ties to the stricter bars."""
    best, key = (0.0, -2.0), None
    for confirm, none in itertools.product(CONFIRM_GRID, nones or NONE_GRID):
        if none > confirm:
            continue
        m = metrics(replay(rows, (confirm, none), today))
        feasible = (m["wrong_unmarked"]["rate"] or 0) <= 0.05
        feasible = feasible and (m["not_found_answerable"]["rate"] or 0) <= 0.1
        gain = (m["not_found_unanswerable"]["rate"] or 0) - (m["right_marked"]["rate"] or 0)
        score = (feasible, gain, confirm, none)
        if key is None or score > key:
            best, key = (confirm, none), score
    return best


def kept_rows(path: Path) -> dict[str, dict]:
    """The rows kept in `path` (a set's --work/SET.jsonl), by question id; {} when none."""
    return {r["id"]: r for r in _jsonl(path)} if path.exists() else {}


def quoted(ctx, answerer, rows: list[dict]):
    """Each question row with its retrieved chunks and its quote, as the answer path finds them
    (no model): (row, hits, found); a row whose quote is empty is passed over."""
    for row in rows:
        question = row["question"]
        hits, found = answerer.quote(question, ctx.embedder.embed_batch([question])[0])
        if found.lines:
            yield row, hits, found


def header_after(item) -> str:
    """An excerpt (assistant/answer/excerpts.py) as the reader read it before it read the
    header first: the text, then " (sender · date · subject)". The finished studies measured
    that order, and replay in it."""
    return f"{item.text} ({item.where})" if item.where else item.text


def margins(row: dict) -> list[float]:
    """A kept row's margins: the quote's (NO_QUOTE where there was no quote), then the next
    candidates'."""
    first = row["quote_margin"] if row["quote_margin"] is not None else NO_QUOTE
    return [first, *(c["margin"] for c in row["candidates"])]


def auc(pos: list[float], neg: list[float]) -> float | None:
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def today_rows(args: argparse.Namespace, name: str) -> dict:
    """The "noreader" rows bench/funnel.py wrote for `name` in one of --today dirs, by key()."""
    for folder in args.today:
        path = folder / f"{name}-noreader.jsonl"
        if path.exists():
            return {key({"set": name, "id": r["id"]}): r for r in _jsonl(path)}
    return {}


def summarize(args: argparse.Namespace, names: list[str]) -> None:
    rows = {
        n: _jsonl(args.work / f"{n}.jsonl") for n in names if (args.work / f"{n}.jsonl").exists()
    }
    today = {n: today_rows(args, n) for n in rows}
    everyone = {k: v for t in today.values() for k, v in t.items()}
    fit_rows = [r for n in FIT_SETS if n in rows for r in rows[n] if r["half"] == "a"]
    alone = fit(fit_rows, None)
    with_sentence = fit(fit_rows, everyone) if everyone else None
    # the reader only confirms (never "not found" on its own): its bar fitted the same way
    confirming = fit(fit_rows, everyone, [-99.0]) if everyone else None
    reports = {"fit (half a)": fit_rows}
    for n, rs in rows.items():
        label = f"{n} (half b)" if n in FIT_SETS else n
        reports[label] = [r for r in rs if n not in FIT_SETS or r["half"] == "b"]
    results, table = {}, []
    for label, rs in reports.items():
        designs = {"reader alone": metrics(replay(rs, alone, None))}
        if with_sentence is not None:
            designs["reader + sentence"] = metrics(replay(rs, with_sentence, everyone))
            designs["reader confirms + sentence"] = metrics(replay(rs, confirming, everyone))
            designs["no reader"] = metrics(as_today(rs, everyone))
        shown = [r for r in rs if r["quote_margin"] is not None and r["quote_facts"] is not None]
        right = [r["quote_margin"] for r in shown if r["quote_facts"] and r["answerable"]]
        wrong = [r["quote_margin"] for r in shown if not r["quote_facts"] or not r["answerable"]]
        confirmed = [r for r in rs if r["quote_margin"] is not None]
        results[label] = {
            "designs": designs,
            "auc_quote": auc(right, wrong),
            "quote_verdict_p50_s": percentile([r["t_quote"] for r in confirmed], 50),
            "all_verdicts_p50_s": percentile(
                [r["t_quote"] + r["t_candidates"] for r in confirmed], 50
            ),
            "n": len(rs),
        }
        for design, m in designs.items():
            table.append([label, design, m["right_marked"]["n"], m["right_marked"]["rate"],
                          m["wrong_unmarked"]["rate"], m["not_found_unanswerable"]["rate"],
                          m["not_found_answerable"]["rate"], m["shown_vs_top3"],
                          results[label]["auc_quote"]])  # fmt: skip
    print_table(
        f"bars (confirm, none): alone {alone}, + sentence {with_sentence}, confirms {confirming}",
        ["set", "design", "right", "right marked", "wrong unmarked", "NF unansw.", "NF answ.",
         "shown/top3", "AUC quote"], table)  # fmt: skip
    bars = {"reader alone": alone, "reader + sentence": with_sentence,
            "reader confirms + sentence": confirming}  # fmt: skip
    write_results(args.out, {"bars": bars, "results": results, "fit_sets": FIT_SETS},
                  {k: str(v) for k, v in vars(args).items()} | {"sets": names})  # fmt: skip


def main() -> None:
    args = parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    names = args.sets.split(",")
    if not args.summarize:
        for name in names:
            run_set(name, args)
    summarize(args, names)


if __name__ == "__main__":
    main()
