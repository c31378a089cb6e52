"""The reader's verdict taken from the writer's own context (issue 47: the verdict's own prompt
is most of a written answer's time at 1.5B): the writer's prompt as the app builds it (system,
chunks, the quote's lines, the question), its one sentence decoded, then one more user turn,
"Does the quoted evidence state the answer to the question? Reply Yes or No.", and the margin
log p(Yes) − log p(No). In the app its chunks' KV would come from the tree and only the short
extra turn would be prefilled, instead of the verdict's own prompt. Scored by AUC against the
pointwise quote margins of bench/reader_fit.py's rows on the same questions (--rows): the quote
holds the facts (answerable questions), and answerable vs not (best margin).

    python bench/studies/verdict_in_context.py [--set new] [--every 1] [--work /tmp/reader_fit]
        [--rows /tmp/reader_fit] [--out verdict_in_context]

No KV reuse here (its reading, not its speed). Rows are kept in --work/in-context-SET.jsonl.
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

from _common import log, print_table, write_results  # noqa: E402
from _funnel_worker import has  # noqa: E402
from reader_fit import SETS, auc, kept_rows, questions, quoted  # noqa: E402

ASK = "Does the quoted evidence state the answer to the question? Reply Yes or No."


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="new")
    parser.add_argument("--every", type=int, default=1, help="every n-th question")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--work", type=Path, default=Path("/tmp/reader_fit"))
    parser.add_argument("--rows", type=Path, default=Path("/tmp/reader_fit"))
    parser.add_argument("--out", default="verdict_in_context")
    return parser.parse_args()


def run(args: argparse.Namespace, tmp: Path) -> list[dict]:
    from assistant.answer.evidence import prompt_records
    from assistant.answer.shape import shown
    from assistant.clock import Clock
    from assistant.events import TokenStreamed
    from assistant.services import open_services

    kind, files = SETS[args.set]
    out_path = args.work / f"in-context-{args.set}.jsonl"
    kept = list(kept_rows(out_path).values())
    todo = [q for q in questions(files)[:: args.every] if q["id"] not in {r["id"] for r in kept}]
    if not todo:
        return kept
    home = tmp / f"home-{kind}"
    shutil.copytree(args.work / f"home-{kind}", home)
    ctx = open_services(home)
    ctx.settings.models.reader = ctx.settings.models.writer = args.model
    answerer = ctx.answerer()
    cache, llm = answerer.cache, answerer.cache.llm
    frame = cache.frame
    turn = "<|im_end|>\n" + frame.head.split("system", 1)[0] if "<|im_start|>" in frame.head else ""
    extra = f"{turn}user\n{ASK}{frame.tail}" if turn else f"\n{ASK}{frame.tail}"
    yes, no = llm.tokenize("Yes")[0], llm.tokenize("No")[0]
    with out_path.open("a", encoding="utf-8") as out:
        for q, hits, found in quoted(ctx, answerer, todo):
            question, must = q["question"], list(q.get("must_contain") or [])
            chunks = ctx.settings.answer.prompt_chunks
            read = prompt_records([h.record for h in hits], found, chunks)
            lines = [e.sentence for e in found.lines]
            segments = cache.segments([r.text for r in read], question, lines)
            started = time.perf_counter()
            pieces = []
            check = cache.checker(False)
            for event in cache.stream(question, segments, False, check, Clock(), sentences=1,
                                      keep=False, user=True):  # fmt: skip
                if isinstance(event, TokenStreamed):
                    pieces.append(event.text)
            with llm.for_the_user():
                llm.eval(llm.tokenize(extra))
                logits = llm.logits()
            row = {"id": q["id"], "answerable": q.get("answerable", True) is not False,
                   "quote_facts": has(shown(found), must),
                   "margin": float(logits[yes] - logits[no]), "sentence": "".join(pieces),
                   "tokens": segments.total, "seconds": time.perf_counter() - started}  # fmt: skip
            out.write(json.dumps(row) + "\n")
            out.flush()
            kept.append(row)
            log(
                f"{q['id']}: {row['margin']:+.2f} ({'right' if row['quote_facts'] else 'wrong'}"
                f"{'' if row['answerable'] else ', unanswerable'}), {row['seconds']:.1f} s"
            )
    return kept


def main() -> None:
    args = parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = run(args, Path(tmp))
    theirs = kept_rows(args.rows / f"{args.set}.jsonl")
    paired = [r for r in rows if theirs.get(r["id"], {}).get("quote_margin") is not None]

    def aucs(score) -> tuple:
        right = [score(r) for r in paired if r["answerable"] and r["quote_facts"]]
        wrong = [score(r) for r in paired if not (r["answerable"] and r["quote_facts"])]
        ans = [score(r) for r in paired if r["answerable"]]
        unans = [score(r) for r in paired if not r["answerable"]]
        return auc(right, wrong), auc(ans, unans)

    mine = aucs(lambda r: r["margin"])
    pointwise = aucs(lambda r: theirs[r["id"]]["quote_margin"])
    table = [["in the writer's context", len(paired), f"{mine[0]:.3f}", f"{mine[1] or 0:.3f}"],
             ["own prompt (shipped)", len(paired), f"{pointwise[0]:.3f}",
              f"{pointwise[1] or 0:.3f}"]]  # fmt: skip
    print_table(f"the verdict on the quote, {args.set}",
                ["verdict", "questions", "AUC quote right", "AUC answerable"], table)  # fmt: skip
    data = {"set": args.set, "questions": len(paired),
            "auc_quote_right": {"in_context": mine[0], "own_prompt": pointwise[0]},
            "auc_answerable": {"in_context": mine[1], "own_prompt": pointwise[1]},
            "rows": rows}  # fmt: skip
    write_results(args.out, data, {k: str(v) for k, v in vars(args).items()})


if __name__ == "__main__":
    main()
