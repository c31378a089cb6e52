"""The reader's prompt, chosen by a bench: the AUC of its margin log p(Yes) − log p(No) for the
quote the answer path shows (no model: retrieval and the line scorer), right (every fact of the
question shown) against wrong (a fact missing, or the question has no answer), per prompt form.

Forms: the question first, then the excerpt ("question-first": its KV shared by the excerpts
judged for one question), with a task-specific instruction ("task") or the shipped one's
wording; the excerpt first ("excerpt-first"); with worked examples in the fixed instruction
("+examples", whose KV is cached, so they cost no time per verdict); and the shipped prompts
(prompts/reader_*.txt). On the first questions of the demo set and of the dev mailbox's
earlier set (fit sets; the new questions are never used here).

    python bench/reader_prompts.py [--n 40] [--out reader_prompts]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import QA_DIR, REPO, log, print_table, write_results  # noqa: E402
from _funnel_worker import has  # noqa: E402
from reader_fit import auc, quoted  # noqa: E402

TASK = (
    "You check answers found in a person's own mail. You are given a question and an excerpt "
    "of a mail. Reply Yes if the excerpt itself states the answer to the question, No if it "
    "does not."
)
Q_FIRST = (
    "Question: {question}\nExcerpt: {excerpt}\nDoes the excerpt state the answer to the question?"
)
E_FIRST = "Excerpt: {excerpt}\nQuestion: {question}\nIs the answer stated in the excerpt?"


def shots(n: int) -> str:
    """The first `n` worked examples of the shipped instruction."""
    text = (REPO / "prompts" / "reader_system.txt").read_text(encoding="utf-8")
    return "\n\n" + "\n\n".join(text.strip().split("\n\n")[1 : 1 + n])


def forms() -> dict[str, tuple[str, str, str]]:
    """name → (instruction, prompt, which excerpt: "quote" is the quote's lines alone, "mail"
    adds its mail's sender · date · subject ("mail first": before the quote, so that a KV node of
    the header and a mail line could serve every quote that opens with that line,
    bench/studies/verdict_tokens.py), "shown" is everything the answer shows: the quote, its
    mail, and the other mail's line with its mail)."""
    shipped = (REPO / "prompts" / "reader_system.txt").read_text(encoding="utf-8").strip()
    states = (REPO / "prompts" / "reader_states.txt").read_text(encoding="utf-8").strip()
    return {
        "question-first, task": (TASK, Q_FIRST, "quote"),
        "excerpt-first, task": (TASK, E_FIRST, "quote"),
        "excerpt-first, task +2 examples": (TASK + shots(2), E_FIRST, "quote"),
        "shipped (excerpt-first, +5 examples)": (shipped, states, "quote"),
        "shipped, the quote and its mail": (shipped, states, "mail"),
        "shipped, its mail first": (shipped, states, "mail first"),
        "shipped, all that is shown": (shipped, states, "shown"),
    }


def excerpts(found) -> dict[str, str]:
    """The excerpt a form judges (forms()), from what the answer path found."""
    from assistant.answer.shape import mail_line, mail_of, shown_lines

    quote = " ".join(e.sentence for e in found.lines)
    where = mail_line(mail_of(found.record))
    return {"quote": quote, "mail": f"{quote} ({where})", "mail first": f"({where}) {quote}",
            "shown": " / ".join(shown_lines(found))}  # fmt: skip


def items(home: Path, files: list[Path], n: int, model: str) -> tuple[object, list[tuple]]:
    from assistant.answer.shape import shown
    from assistant.services import open_services

    ctx = open_services(home)
    ctx.settings.models.reader = model
    answerer, out = ctx.answerer(), []
    rows = [json.loads(x) for f in files for x in f.read_text().splitlines() if x.strip()][:n]
    for row, _, found in quoted(ctx, answerer, rows):
        right = bool(has(shown(found), list(row.get("must_contain") or [])))
        right = right and row.get("answerable", True) is not False
        out.append((row["question"], excerpts(found), right))
    return ctx, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--demo-home", type=Path, default=Path("/tmp/reader_fit/home-demo"))
    parser.add_argument("--real-home", type=Path, default=Path("/tmp/reader_fit/home-real"))
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--forms", default="", help="the forms run, by name, separated by ;")
    parser.add_argument("--out", default="reader_prompts")
    args = parser.parse_args()
    from assistant.answer.judge import Prompts, Reader

    sets = {
        "demo": items(
            args.demo_home,
            [QA_DIR / "mail_qa.jsonl", QA_DIR / "notes_qa.jsonl"],
            args.n,
            args.model,
        ),
        "real": items(args.real_home, [QA_DIR / "skilling_qa.jsonl"], args.n, args.model),
    }
    llm = sets["demo"][0].judge.llm
    results, table = {}, []
    wanted = set(args.forms.split(";")) if args.forms else None
    for name, (system, states, which) in forms().items():
        if wanted and name not in wanted:
            continue
        reader = Reader(llm, Prompts(system, states, ""))
        for set_name, (_, rows) in sets.items():
            start = time.perf_counter()
            margins = [reader._margins([states.format(excerpt=" ".join(e[which].split())[:800],
                                                      question=" ".join(q.split()))])[0]
                       for q, e, _ in rows]  # fmt: skip
            seconds = (time.perf_counter() - start) / max(1, len(rows))
            pos = [m for m, r in zip(margins, rows, strict=True) if r[2]]
            neg = [m for m, r in zip(margins, rows, strict=True) if not r[2]]
            results.setdefault(name, {})[set_name] = {
                "auc": auc(pos, neg), "right": len(pos), "wrong": len(neg), "seconds_each": seconds,
            }  # fmt: skip
            log(f"{name} / {set_name}: AUC {auc(pos, neg):.3f}")
        table.append([name, results[name]["demo"]["auc"], results[name]["real"]["auc"],
                      results[name]["real"]["seconds_each"]])  # fmt: skip
    print_table("reader prompt forms: AUC of the quote's margin, right vs wrong",
                ["form", "demo", "real (dev, earlier set)", "s per verdict"], table)  # fmt: skip
    write_results(args.out, {"forms": results}, {k: str(v) for k, v in vars(args).items()})


if __name__ == "__main__":
    main()
