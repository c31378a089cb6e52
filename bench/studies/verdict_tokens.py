"""Where the reader's verdict on the quote spends its tokens, and how many of them a KV node made
at night could hold (issue 47: the verdict is most of a covered question's time at 1.5B). For
each question, the quote as the app finds it (no model) and its verdict prompt as judge.py
builds it, split into: "Excerpt: " and the quote's text · its mail's header " (sender · date ·
subject)" · the question and the fixed ask with the chat template's tail. A night could make
a node per line of a chunk it covers ("Excerpt: " + the line); such a node serves a verdict
when its tokens are a prefix of the prompt's: always when the quote is one line shown whole
(then the header and the newline after it can be in the node too), for its first line when the
quote is several.

    python bench/studies/verdict_tokens.py --home H --questions Q [--out verdict_tokens]

Tokenizes only (no verdict is computed): the seconds are tokens ÷ the prefill pace given.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

from _common import log, print_table, write_results  # noqa: E402
from reader_fit import header_after  # noqa: E402


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True, help="an imported home (copied)")
    parser.add_argument("--questions", type=Path, action="append", required=True)
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--pace", type=float, default=36.0, help="prefill tokens/s, 2 cores")
    parser.add_argument("--out", default="verdict_tokens")
    return parser.parse_args()


def rows_for(args: argparse.Namespace, home: Path) -> list[dict]:
    from assistant.answer.excerpts import EXCERPT_CHARS
    from assistant.answer.judge import quote_excerpt
    from assistant.answer.shape import mail_line, mail_of
    from assistant.services import open_services

    ctx = open_services(home)
    ctx.settings.models.reader = ctx.settings.models.writer = args.model
    answerer = ctx.answerer()
    reader = answerer.judge
    frame = reader._ready()
    llm = reader.llm
    lines = [x for path in args.questions for x in path.read_text("utf-8").splitlines()]
    questions = [json.loads(x) for x in lines if x.strip()]
    rows = []
    for q in questions:
        question = " ".join(q["question"].split())
        _, found = answerer.quote(question, ctx.embedder.embed_batch([question])[0])
        if not found.lines:
            continue
        excerpt = header_after(quote_excerpt(found))  # as the reader read it then
        item = reader.prompts.states.format(excerpt=excerpt, question=question) + frame.tail
        where = mail_line(mail_of(found.record)) if found.record is not None else ""
        head, _, rest = item.partition(excerpt)
        text = excerpt[: -len(f" ({where})")] if where else excerpt
        first = found.lines[0].sentence
        whole = len(found.lines) == 1 and text == " ".join(first.split())[:EXCERPT_CHARS]
        tokens = llm.tokenize(item)
        n_item, n_text = len(tokens), len(llm.tokenize(head + text))
        n_excerpt = len(llm.tokenize(head + excerpt))
        excerpt_node = llm.tokenize(head + excerpt + "\n")  # ")" and "\n" may be one token
        first_node = llm.tokenize(head + " ".join(first.split()))
        whole = whole and tokens[: len(excerpt_node)] == excerpt_node
        prefix = tokens[: len(first_node)] == first_node
        # the same with the header first ("Excerpt: (sender · date · subject) line line"): a
        # node then holds the header and the quote's first line whatever follows it
        shown = f"({where}) {text}" if where else text
        header_first = reader.prompts.states.format(excerpt=shown, question=question)
        node_hf = llm.tokenize(head + (f"({where}) " if where else "") + " ".join(first.split()))
        hf_tokens = llm.tokenize(header_first + frame.tail)
        hf_node = len(node_hf) if hf_tokens[: len(node_hf)] == node_hf else 0
        rows.append({"id": q.get("id"), "header_first_node": hf_node,
                     "lines": len(found.lines), "whole_line": whole,
                     "tokens": n_item, "text": n_text, "header": n_excerpt - n_text,
                     "question_and_ask": n_item - n_excerpt,
                     "node": len(excerpt_node) if whole else len(first_node) * prefix})  # fmt: skip
    log(f"{len(rows)} quotes of {len(questions)} questions")
    return rows


def main() -> None:
    args = parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        shutil.copytree(args.home, home, ignore=shutil.ignore_patterns("cache", "run"))
        rows = rows_for(args, home)

    def mean(key: str) -> float:
        return statistics.fmean(r[key] for r in rows)

    whole = sum(r["whole_line"] for r in rows) / len(rows)
    summary = {"quotes": len(rows), "one_line_shown_whole": whole,
               "tokens": mean("tokens"), "text": mean("text"), "header": mean("header"),
               "question_and_ask": mean("question_and_ask"), "in_a_node": mean("node"),
               "in_a_node_header_first": mean("header_first_node"),
               "seconds_now": mean("tokens") / args.pace,
               "seconds_with_nodes": (mean("tokens") - mean("node")) / args.pace,
               "seconds_header_first":
                   (mean("tokens") - mean("header_first_node")) / args.pace}  # fmt: skip
    print_table(
        "the reader's verdict on the quote: tokens after its cached instruction",
        ["quotes", "one line whole", "tokens", "Excerpt+text", "header", "question+ask",
         "in a night's node", "header first", "s now", "s with nodes", "s header first"],
        [[summary[k] for k in ("quotes", "one_line_shown_whole", "tokens", "text", "header",
                               "question_and_ask", "in_a_node", "in_a_node_header_first",
                               "seconds_now", "seconds_with_nodes", "seconds_header_first")]],
        note=f"seconds at {args.pace} tokens/s",
    )  # fmt: skip
    params = {k: str(v) for k, v in vars(args).items()}
    write_results(args.out, {"summary": summary, "rows": rows}, params)


if __name__ == "__main__":
    main()
