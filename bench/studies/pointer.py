"""The model's pointer as a line-scorer feature (issue 31, item 3): over the best lines the
line scorer ranks for a question, numbered in a prompt, which line does the model say answers
("Line " → the log-probabilities of the digits 1–9)? Counted against the scorer's own first
line and their fusion, on questions with must_contain strings: a line "holds the facts" when it
holds every one of them.

    python bench/studies/pointer.py --home H --questions data/qa/skilling_qa.jsonl [--out pointer]

Reads one prompt per question through the shipped GGUF (no KV reuse: the probe is the model's
reading, not its speed). Writes bench/results/NAME.json.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

import numpy as np  # noqa: E402
from _common import log, print_table, write_results  # noqa: E402

from assistant.llm.model_file import default_llm_model, load_llama  # noqa: E402
from assistant.services import open_services  # noqa: E402

LINES = 9  # single-token digits
SYSTEM = "You pick the line that answers the question."
FUSION_WEIGHTS = (0.5, 1.0, 2.0)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--out", default="pointer")
    return parser.parse_args()


def holds(text: str, must: list[str]) -> bool:
    low = re.sub(r"\s+", " ", text.lower())
    return all(re.sub(r"\s+", " ", m.lower()) in low for m in must)


def prompt(lines: list[str], question: str) -> str:
    body = "\n".join(f"{i + 1}. {t}" for i, t in enumerate(lines))
    return (f"<|im_start|>system\n{SYSTEM}<|im_end|>\n<|im_start|>user\nLines:\n{body}\n\n"
            f"Question: {question}\nWhich line answers it? Reply with its number.<|im_end|>\n"
            "<|im_start|>assistant\nLine ")  # fmt: skip


def main() -> None:
    args = parse_args()
    ctx = open_services(args.home)
    answerer = ctx.answerer()
    llm = load_llama(default_llm_model(), 2048, 2)
    digits = [llm.tokenize(str(i).encode(), add_bos=False, special=False)[0]
              for i in range(1, LINES + 1)]  # fmt: skip
    rows = []
    for line in args.questions.read_text().splitlines():
        q = json.loads(line)
        if not q.get("answerable", True) or not q.get("must_contain"):
            continue
        vector = ctx.embedder.embed_batch([q["question"]])[0]
        _, found = answerer.quote(q["question"], vector)
        ranked = found.ranked[:LINES]
        if not ranked:
            continue
        texts = [c.line.text[:300] for c, _ in ranked]
        tokens = llm.tokenize(prompt(texts, q["question"]).encode(), add_bos=False, special=True)
        llm.reset()
        t0 = time.perf_counter()
        llm.eval(tokens)
        seconds = time.perf_counter() - t0
        logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),))
        z = logits[digits][: len(texts)].astype(np.float64)
        pointer = np.exp(z - z.max())
        pointer /= pointer.sum()
        rows.append({"id": q["id"], "good": [holds(t, q["must_contain"]) for t in texts],
                     "scorer": [p for _, p in ranked], "pointer": pointer.tolist(),
                     "seconds": seconds, "tokens": len(tokens)})  # fmt: skip
        log(
            f"{q['id']}: scorer {rows[-1]['good'][0]}, pointer "
            f"{rows[-1]['good'][int(pointer.argmax())]}"
        )
    summary = summarize(rows)
    print_table(f"the model's pointer, {args.questions.name}", ["pick", "lines holding the facts"],
                [[k, f"{v}/{len(rows)}"] for k, v in summary["first"].items()])  # fmt: skip
    data = {"questions": len(rows), **summary, "rows": rows}
    print(f"wrote {write_results(args.out, data, {k: str(v) for k, v in vars(args).items()})}")


def summarize(rows: list[dict]) -> dict:
    def first(score) -> int:
        return sum(r["good"][int(np.argmax(score(r)))] for r in rows)

    picks = {
        "any of the lines": sum(any(r["good"]) for r in rows),
        "scorer": first(lambda r: r["scorer"]),
        "pointer": first(lambda r: r["pointer"]),
    }
    for w in FUSION_WEIGHTS:
        picks[f"scorer x pointer^{w:g}"] = first(
            lambda r, w=w: (
                np.log(np.array(r["scorer"]) + 1e-9) + w * np.log(np.array(r["pointer"]) + 1e-9)
            )
        )
    return {"first": picks, "pointer_seconds_p50": float(np.median([r["seconds"] for r in rows]))}


if __name__ == "__main__":
    main()
