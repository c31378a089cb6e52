"""Would the model's likelihoods confirm a quote (issue 31's "right answers marked")? Over a funnel
run's shown answers (answerable, not "not found"), two pointwise mutual informations from the
shipped model, per token:

- question PMI: log p(question | "Mail: <the lines shown>") − log p(question | "Mail:"), the
  query likelihood the DL19 reranker uses, here of the question given the quote;
- answer PMI: log p(lines | question) − log p(lines | no question);
- yes/no: log p(" Yes") − log p(" No") after the lines, the question and ASK (the model asked
  whether the mail answers, as an answer-verification model would be).

For each set, the AUC of each against "the facts are in what is shown" (1: ranks every right
answer above every wrong one; 0.5: chance), beside the marks the funnel run gave. A signal worth
building into the marks would need an AUC well above what the marks already get.

    python bench/studies/confirm_ql.py [--funnel bench/results/funnel_vacuous.json]
                                       [--out confirm_ql] [--model gemma-3-270m]

--model scores with another model (a name bench/rerank knows, or a GGUF path) than the answer's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

import numpy as np  # noqa: E402
from _common import RESULTS_DIR, log, print_table, write_results  # noqa: E402
from funnel import SETS, model_path  # noqa: E402

from assistant.llm.model_file import default_llm_model  # noqa: E402
from assistant.llm.runtime import LocalLLM  # noqa: E402

ASK = "Does the mail answer the question? Answer Yes or No:"


def logprob(llm: LocalLLM, prefix: str, target: str) -> tuple[float, int]:
    """log p(target | prefix) under the model, and the target's tokens."""
    head = llm.tokenize(prefix, first=True)
    tail = llm.tokenize(target)
    llm.reset()
    scores = llm.eval_logprobs(head + tail, first_scored=len(head))
    return float(np.sum(scores)), len(tail)


def auc(right: list[float], wrong: list[float]) -> float | None:
    if not right or not wrong:
        return None
    pairs = [(r > w) + 0.5 * (r == w) for r in right for w in wrong]
    return float(np.mean(pairs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--funnel", type=Path, default=RESULTS_DIR / "funnel_vacuous.json")
    parser.add_argument("--design", default="quote")
    parser.add_argument("--out", default="confirm_ql")
    parser.add_argument("--model", default="", help="default: the answer's model")
    args = parser.parse_args()
    funnel = json.loads(args.funnel.read_text())
    path = model_path(args.model) if args.model else default_llm_model()
    llm = LocalLLM(path, n_ctx=2048, n_threads=0)
    rows, summary = [], {}
    for name, files in SETS.items():
        if name not in funnel["sets"]:
            continue
        questions = {}
        for path in files:
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    q = json.loads(line)
                    questions[q["id"]] = q["question"]
        for r in funnel["sets"][name][args.design]["rows"]:
            if not r["answerable"] or r["not_found"] or not r["evidence"]:
                continue
            question, lines = questions[r["id"]], " ".join(r["evidence"])
            with_lines, n = logprob(llm, f"Mail: {lines}\nQuestion:", f" {question}")
            without, _ = logprob(llm, "Mail:\nQuestion:", f" {question}")
            given, m = logprob(llm, f"Question: {question}\nAnswer from the mail:", f" {lines}")
            alone, _ = logprob(llm, "Question:\nAnswer from the mail:", f" {lines}")
            asked = f"Mail: {lines}\nQuestion: {question}\n{ASK}"
            yes, _ = logprob(llm, asked, " Yes")
            no, _ = logprob(llm, asked, " No")
            rows.append({
                "set": name, "id": r["id"], "right": r["facts_shown"], "marked": r["marked"],
                "question_pmi": (with_lines - without) / n, "answer_pmi": (given - alone) / m,
                "yes_no": yes - no,
            })  # fmt: skip
        log(f"{name}: {sum(x['set'] == name for x in rows)} shown answers scored")
        mine = [x for x in rows if x["set"] == name]
        right = [x for x in mine if x["right"]]
        wrong = [x for x in mine if not x["right"]]
        summary[name] = {
            "right": len(right),
            "wrong": len(wrong),
            "auc_question_pmi": auc([x["question_pmi"] for x in right],
                                    [x["question_pmi"] for x in wrong]),
            "auc_answer_pmi": auc([x["answer_pmi"] for x in right],
                                  [x["answer_pmi"] for x in wrong]),
            "auc_yes_no": auc([x["yes_no"] for x in right], [x["yes_no"] for x in wrong]),
            "right_marked": sum(x["marked"] for x in right),
            "wrong_unmarked": sum(not x["marked"] for x in wrong),
        }  # fmt: skip
    print_table(
        "the model's likelihoods as a confirmation of the quote: AUC, right vs wrong shown",
        ["set", "right · wrong", "question PMI", "answer PMI", "yes/no",
         "marks: right marked · wrong not"],
        [
            [k, f"{v['right']} · {v['wrong']}", f"{v['auc_question_pmi']:.2f}",
             f"{v['auc_answer_pmi']:.2f}", f"{v['auc_yes_no']:.2f}",
             f"{v['right_marked']} · {v['wrong_unmarked']}"]
            for k, v in summary.items()
        ],
    )  # fmt: skip
    write_results(args.out, {"summary": summary, "rows": rows}, vars(args))


if __name__ == "__main__":
    main()
