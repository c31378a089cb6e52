"""The reader asked once over its candidates (issue 46): the quote and the next candidate lines
(the same the reader judges one by one today, with their mails' headers), numbered in one
prompt with "0: none of them", and the 1.5B model's probabilities of the digits 0..k.

Against the pointwise margins of bench/reader_fit.py's rows (--rows; the same questions, lines
and model): which line is right when the pointer's best is taken (vs the quote, and vs the
best pointwise margin), the AUC of the pointer's probability of its line for "that line holds
the facts", and the AUC of "none" for the questions the mail cannot answer. One prompt per
question, no KV reuse (its reading, not its speed: its prompt's tokens are reported).

    python bench/studies/pointer_reader.py [--sets real,new,fossum] [--work /tmp/reader_fit]
        [--rows /tmp/reader_fit] [--out pointer_reader]

Homes are copied from --work (home-demo, home-real, home-fossum; bench/reader_fit.py makes
them). Writes bench/results/OUT.json; rows are kept in --work/pointer-SET.jsonl and resumed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

import numpy as np  # noqa: E402
from _common import log, print_table, write_results  # noqa: E402
from _funnel_worker import has  # noqa: E402
from reader_fit import SETS, auc, header_after, kept_rows, margins, questions, quoted  # noqa: E402

SYSTEM = (
    "You check answers found in a person's own mail. You are given numbered excerpts of mail "
    "and a question. Reply with the number of the excerpt that itself states the answer to "
    "the question, or 0 if none of them does."
)
ASK = "Excerpts:\n{lines}\n\nQuestion: {question}\nWhich excerpt states the answer (0 if none)?"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="real,new,fossum")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--work", type=Path, default=Path("/tmp/reader_fit"))
    parser.add_argument("--rows", type=Path, default=Path("/tmp/reader_fit"))
    parser.add_argument("--out", default="pointer_reader")
    return parser.parse_args()


def run_set(name: str, args: argparse.Namespace, tmp: Path) -> list[dict]:
    from assistant.answer.judge import candidate_excerpt, next_candidates, promoted, quote_excerpt
    from assistant.answer.shape import shown
    from assistant.llm.prompt import chat_frame
    from assistant.services import open_services

    kind, files = SETS[name]
    out_path = args.work / f"pointer-{name}.jsonl"
    kept = list(kept_rows(out_path).values())
    todo = [q for q in questions(files) if q["id"] not in {r["id"] for r in kept}]
    if not todo:
        return kept
    home = tmp / f"home-{kind}"
    if not home.exists():
        shutil.copytree(args.work / f"home-{kind}", home)
    ctx = open_services(home)
    ctx.settings.models.reader = args.model
    answerer, llm = ctx.answerer(), ctx.judge.llm
    frame = chat_frame(llm)
    digits = [llm.tokenize(str(i))[0] for i in range(10)]
    with out_path.open("a", encoding="utf-8") as out:
        for q, _, found in quoted(ctx, answerer, todo):
            question, must = q["question"], list(q.get("must_contain") or [])
            others = next_candidates(found, question)
            excerpts = [quote_excerpt(found), *(candidate_excerpt(c) for c in others)]
            lines = [header_after(e) for e in excerpts]  # the order this study measured
            facts = [has(shown(found), must)]
            facts += [has(shown(promoted(found, c, question)), must) for c in others]
            listed = "\n".join(f"{i + 1}. {t}" for i, t in enumerate(lines))
            user = ASK.format(lines=listed, question=" ".join(question.split()))
            tokens = llm.tokenize(frame.head + SYSTEM + frame.middle + user + frame.tail,
                                  first=True)  # fmt: skip
            started = time.perf_counter()
            with llm.for_the_user():
                llm.reset()
                llm.eval(tokens)
                logits = np.asarray(llm.logits(), dtype=np.float64)
            z = logits[digits[: len(lines) + 1]]
            p = np.exp(z - z.max())
            p /= p.sum()
            row = {"id": q["id"], "half": q["half"],
                   "answerable": q.get("answerable", True) is not False,
                   "facts": facts, "p": p.tolist(), "tokens": len(tokens),
                   "seconds": time.perf_counter() - started}  # fmt: skip
            out.write(json.dumps(row) + "\n")
            out.flush()
            kept.append(row)
            log(
                f"{name} {q['id']}: none {p[0]:.2f}, best {int(p[1:].argmax()) + 1} "
                f"({'right' if facts[int(p[1:].argmax())] else 'wrong'}), {row['seconds']:.1f} s"
            )
    return kept


def summary(rows: list[dict], kept: dict) -> dict:
    best = [int(np.argmax(r["p"][1:])) for r in rows]
    answerable = [r for r in rows if r["answerable"]]
    pos_ok = [r["p"][1 + b] for r, b in zip(rows, best, strict=True) if r["facts"][b]]
    neg_ok = [r["p"][1 + b] for r, b in zip(rows, best, strict=True) if not r["facts"][b]]
    out = {
        "questions": len(rows),
        "answerable": len(answerable),
        "quote_right": sum(r["facts"][0] for r in answerable),
        "pointer_right": sum(r["facts"][best[i]] for i, r in enumerate(rows) if r["answerable"]),
        "any_right": sum(any(r["facts"]) for r in answerable),
        "auc_pointer_line": auc(pos_ok, neg_ok),
        "auc_none_unanswerable": auc(
            [-r["p"][0] for r in answerable], [-r["p"][0] for r in rows if not r["answerable"]]
        ),
        "seconds_p50": float(np.median([r["seconds"] for r in rows])) if rows else None,
        "tokens_p50": float(np.median([r["tokens"] for r in rows])) if rows else None,
    }
    paired = [(r, kept[r["id"]]) for r in rows if r["id"] in kept]
    if paired:

        def margin_pick(r: dict, m: dict) -> bool:
            scores = margins(m)
            return r["facts"][int(np.argmax(scores))] if len(scores) == len(r["facts"]) else None

        picks = [margin_pick(r, m) for r, m in paired if r["answerable"]]
        out["pointwise_right"] = sum(1 for x in picks if x)
        out["auc_pointwise_unanswerable"] = auc(
            [max(margins(m)) for r, m in paired if r["answerable"]],
            [max(margins(m)) for r, m in paired if not r["answerable"]],
        )
    return out


def main() -> None:
    args = parse_args()
    results, table = {}, []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.sets.split(","):
            rows = run_set(name, args, Path(tmp))
            s = summary(rows, kept_rows(args.rows / f"{name}.jsonl"))
            results[name] = {**s, "rows": rows}
            table.append([name, s["answerable"], s["any_right"], s["quote_right"],
                          s.get("pointwise_right", "-"), s["pointer_right"],
                          f"{s['auc_pointer_line'] or 0:.3f}",
                          f"{s.get('auc_pointwise_unanswerable') or 0:.3f}",
                          f"{s['auc_none_unanswerable'] or 0:.3f}",
                          f"{s['seconds_p50']:.1f}"])  # fmt: skip
    print_table("the reader asked once over its candidates (0: none)",
                ["set", "answerable", "any line right", "quote right", "best margin right",
                 "pointer right", "AUC pointer's line", "AUC none: margins",
                 "AUC none: pointer", "s p50"], table)  # fmt: skip
    write_results(args.out, {"sets": results}, {k: str(v) for k, v in vars(args).items()})


if __name__ == "__main__":
    main()
