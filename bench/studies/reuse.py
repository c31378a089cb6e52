"""Any-order chunk KV reuse against exact prefix reuse and no reuse, side by side in one run.

    python bench/studies/reuse.py [--limit N] [--designs a,b] [--home DIR] [--writer NAME]

Over one demo home, every chunk any question's prompt holds gets its own [system, chunk]
KV node and its evidence sentence vectors (as precompute makes them), and no longer path
exists: every question's chunk path is one never seen. Each design then answers each question
(designs in rotating order, the QA bank off; the nodes a design adds below the chunk nodes are
dropped after each answer, so no design profits from another's run):

- naive: no KV reuse;
- exact: [cache] reuse = "exact" (the first chunk's node only);
- any-order/<repair>: every chunk's node, moved where it lands, then the repair policy;
  any-order/evidence/in-prompt: the nodes moved in the prompt's context, not a side one.

Per design: TTFT and prefill (KV load + prefill) p50/p90 and their ratio to naive, prompt tokens
computed (not reused, or repaired), the share of answers identical to exact's, first-token
agreement with exact and the mean KL(exact ‖ design) of the first answer token's distribution,
all facts in the answer (data/qa must_contain) and ROUGE-L against the reference answer, and
against exact, paired: answers with the facts lost and gained, McNemar's exact p, and bootstrap
95% intervals of the facts and ROUGE-L ratios (the questions resampled): how far a ratio on this
many questions can be told from 1. Writes bench/results/reuse.json; `--rescore FILE` recomputes
a results file's summary from its rows, in place.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

from _common import (  # noqa: E402
    QA_FILES,
    demo_context,
    log,
    mean,
    percentile,
    print_table,
    require_demo,
    write_results,
)
from _questions import Question, load  # noqa: E402
from quality import has_expected, mcnemar_p, paired, ratio_interval, rouge_l  # noqa: E402

from assistant import events as p  # noqa: E402
from assistant.answer.answerer import Answerer, CacheLayers  # noqa: E402

# design → [cache] reuse and repair (None: no KV reuse at all)
DESIGNS: dict[str, tuple[str, str] | None] = {
    "naive": None,
    "exact": ("exact", "none"),
    "any-order/none": ("any-order", "none"),
    "any-order/sink-8": ("any-order", "sink-8"),
    "any-order/sink-32": ("any-order", "sink-32"),
    "any-order/blend-15": ("any-order", "blend-15"),
    "any-order/evidence": ("any-order", "evidence"),
    "any-order/evidence/in-prompt": ("any-order", "evidence"),
}
# designs whose chunks' KV is moved in the prompt's context (a re-rotation pass over its n_ctx
# cells) instead of beforehand in a small side context (llm/mover.py)
IN_PROMPT = {"any-order/evidence/in-prompt"}
REFERENCE = "exact"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, nargs="*", default=list(QA_FILES))
    parser.add_argument("--limit", type=int, default=24, help="every n-th question to N (0: all)")
    parser.add_argument("--designs", default=",".join(DESIGNS))
    parser.add_argument("--home", type=Path, help="an imported home to copy (default: import)")
    parser.add_argument("--writer", default="", help="[models] writer, e.g. qwen2.5-coder-1.5b "
                        "(issue 47: any-order reuse measured on Qwen2)")  # fmt: skip
    parser.add_argument("--out", default="reuse")
    parser.add_argument("--rescore", type=Path, help="a results file: recompute its summary")
    return parser.parse_args()


class FirstToken:
    """Records the log-distribution of the first answer token of each greedy decode."""

    def __init__(self, llm) -> None:
        self.llm, self.greedy, self.last = llm, llm.greedy, None
        llm.greedy = self  # an instance attribute: the pipeline's decoder calls this

    def __call__(self, max_tokens, banned=None):
        logits = self.llm.logits().astype(np.float64)
        logits -= logits.max()
        self.last = logits - np.log(np.exp(logits).sum())
        return self.greedy(max_tokens, banned)


def prompt_chunks(pipe: Answerer, question: str) -> list:
    vector = pipe.embedder.embed_batch([question])[0]
    return [h.record for h in pipe.select(question, vector)]


def precompute(pipe: Answerer, questions: list[Question]) -> int:
    """A [system, chunk] node, and the sentence vectors of its evidence, for every chunk of
    every question's prompt (as precompute's chunk_kv jobs make them); how many."""
    chunks = {r.chunk_id: r for q in questions for r in prompt_chunks(pipe, q.question)}
    for i, record in enumerate(chunks.values()):
        pipe.cache.prefill([record.text], background=False)
        pipe.lines.chunk_vectors([record])
        log(f"chunk node {i + 1}/{len(chunks)}")
    pipe.cache.keep_heading(background=False)  # under any-order, as chunk_kv jobs keep it
    return len(chunks)


def drop_paths(pipe: Answerer) -> None:
    """Forget every KV node below the [system, chunk] nodes (what an answer stored)."""
    rows = pipe.kv.db.execute(
        "SELECT blob_key FROM kv_nodes WHERE depth > 2 AND blob_key IS NOT NULL"
    ).fetchall()
    for (key,) in rows:
        pipe.kv.blobs.delete(key)


def answer_once(pipe: Answerer, first: FirstToken, q: Question, design: str) -> dict[str, Any]:
    reuse = DESIGNS[design]
    if reuse:
        cache = replace(pipe.settings.cache, reuse=reuse[0], repair=reuse[1])
        # the prompt cache reads its own settings: both parts get the design's
        pipe.settings = pipe.cache.settings = replace(pipe.settings, cache=cache)
    pipe.cache.llm.move_aside = design not in IN_PROMPT
    events = list(pipe.answer(q.question, CacheLayers(qa=False, kv=reuse is not None)))
    drop_paths(pipe)
    done = next(e for e in events if isinstance(e, p.AnswerDone))
    t = done.timings
    return {
        "id": q.id,
        "answer": done.answer,
        "ttft": t["ttft"],
        "prefill": t["kv_load"] + t["prefill"],
        "build": t.get("build", 0.0),  # the evidence lines and the prompt's segments
        "prompt_tokens": done.prompt_tokens,
        "computed": done.prompt_tokens - done.kv_reused_tokens + done.kv_repaired,
        "repaired": done.kv_repaired,
        "mode": done.kv_reuse,
        "facts_in_answer": has_expected(done.answer, q.must_contain),
        "rouge_l": rouge_l(done.answer, q.answer) if q.answer else None,
        "first": first.last,
    }


def compare(rows: dict[str, list[dict[str, Any]]]) -> None:
    """Per row: identical to the reference's answer, same first token, KL(reference ‖ row)."""
    for design_rows in rows.values():
        for row, ref in zip(design_rows, rows[REFERENCE], strict=True):
            p_ref, p_row = ref["first"], row["first"]
            row["identical"] = row["answer"] == ref["answer"]
            row["first_token_agrees"] = int(p_ref.argmax()) == int(p_row.argmax())
            row["first_token_kl"] = float((np.exp(p_ref) * (p_ref - p_row)).sum())
    for design_rows in rows.values():
        for row in design_rows:
            del row["first"]


def share(rows: list[dict[str, Any]], key: str) -> float:
    values = [r[key] for r in rows if r[key] is not None]
    return sum(map(bool, values)) / len(values) if values else float("nan")


def summarise(rows: list[dict[str, Any]], naive: list[dict[str, Any]] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"questions": len(rows)}
    for key in ("ttft", "prefill", "build"):
        values = [r[key] for r in rows]
        out[f"{key}_p50"], out[f"{key}_p90"] = percentile(values, 50), percentile(values, 90)
        if naive:
            out[f"{key}_p50_vs_naive"] = out[f"{key}_p50"] / percentile([r[key] for r in naive], 50)
    out["computed_tokens_mean"] = mean(r["computed"] for r in rows)
    out["prompt_tokens_mean"] = mean(r["prompt_tokens"] for r in rows)
    out["repaired_tokens_mean"] = mean(r["repaired"] for r in rows)
    out["any_order_share"] = share([{"a": r["mode"] == "any-order"} for r in rows], "a")
    out["identical_to_exact"] = share(rows, "identical")
    out["first_token_agreement"] = share(rows, "first_token_agrees")
    out["first_token_kl_mean"] = mean(r["first_token_kl"] for r in rows)
    out["facts_in_answer"] = share(rows, "facts_in_answer")
    out["rouge_l"] = mean(r["rouge_l"] for r in rows if r["rouge_l"] is not None)
    return out


def against(rows: list[dict[str, Any]], ref: list[dict[str, Any]], draws: int = 5000) -> dict:
    """Paired with the reference, question by question (module docstring)."""
    pairs = list(zip(rows, ref, strict=True))
    facts, rouge = paired(pairs, "facts_in_answer"), paired(pairs, "rouge_l")
    lost = int(((facts[:, 0] == 0) & (facts[:, 1] == 1)).sum())
    gained = int(((facts[:, 0] == 1) & (facts[:, 1] == 0)).sum())
    return {
        "facts_lost": lost,
        "facts_gained": gained,
        "mcnemar_p": mcnemar_p(lost, gained),
        "facts_ratio": float(facts[:, 0].sum() / max(facts[:, 1].sum(), 1)),
        "facts_ratio_ci95": ratio_interval(facts, draws),
        "rouge_l_ratio": float(rouge[:, 0].mean() / rouge[:, 1].mean()),
        "rouge_l_ratio_ci95": ratio_interval(rouge, draws),
    }


def summaries(rows: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    naive = rows.get("naive")
    out = {d: summarise(design_rows, naive) for d, design_rows in rows.items()}
    for d, design_rows in rows.items():
        if d != REFERENCE:
            out[d]["vs_exact"] = against(design_rows, rows[REFERENCE])
        side = d.removesuffix("/in-prompt")
        if d in IN_PROMPT and side in rows:
            out[side]["vs_in_prompt"] = moved_aside(rows[side], design_rows)
    return out


def moved_aside(rows: list[dict[str, Any]], in_prompt: list[dict[str, Any]]) -> dict:
    """KV moved in the side context against the same design moving it in the prompt's context,
    question by question: the answers should be the same, the time to the first token less."""
    pairs = list(zip(rows, in_prompt, strict=True))
    saved = [b["ttft"] - a["ttft"] for a, b in pairs]
    return {
        "identical_answers": share([{"x": a["answer"] == b["answer"]} for a, b in pairs], "x"),
        "ttft_ratio_median": float(np.median([a["ttft"] / b["ttft"] for a, b in pairs])),
        "ttft_saved_median_s": float(np.median(saved)),
        "faster_share": float(np.mean([x > 0 for x in saved])),
    }


def rescore(path: Path) -> dict[str, Any]:
    """A results file with its summary recomputed from its rows (nothing re-run)."""
    results = json.loads(path.read_text())
    results["summary"] = summaries(results["rows"])
    path.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    return results


def run(args: argparse.Namespace) -> dict[str, Any]:
    names = [d for d in args.designs.split(",") if d]
    unknown = [d for d in names if d not in DESIGNS]
    if unknown or REFERENCE not in names:
        raise SystemExit(f"designs: {REFERENCE} and any of {', '.join(DESIGNS)}")
    questions = load(args.questions, args.limit)
    with tempfile.TemporaryDirectory() as tmp:
        ctx = demo_context(Path(tmp), args.home)
        ctx.settings.models.writer, ctx.settings.models.reader = args.writer, "none"
        pipe = ctx.answerer()
        first = FirstToken(pipe.cache.llm)
        nodes = precompute(pipe, questions)
        rows: dict[str, list[dict[str, Any]]] = {d: [] for d in names}
        for i, q in enumerate(questions):
            for name in names[i % len(names) :] + names[: i % len(names)]:
                rows[name].append(answer_once(pipe, first, q, name))
            log(f"{i + 1}/{len(questions)} {q.id}")
    compare(rows)
    summary = summaries(rows)
    return {
        "chunk_nodes": nodes,
        "designs": {d: DESIGNS[d] for d in names},
        "summary": summary,
        "rows": rows,
    }


# the answers against the reference design's, as kv_quant.py reports them too
QUALITY_COLUMNS = [
    ("first_token_agreement", "1st tok agree"),
    ("first_token_kl_mean", "1st tok KL"),
    ("facts_in_answer", "facts∈answer"),
    ("rouge_l", "ROUGE-L"),
]
COLUMNS = [
    ("ttft_p50", "TTFT p50"),
    ("ttft_p90", "TTFT p90"),
    ("ttft_p50_vs_naive", "×naive"),
    ("prefill_p50", "prefill p50"),
    ("prefill_p50_vs_naive", "×naive"),
    ("build_p50", "build p50"),
    ("computed_tokens_mean", "computed tok"),
    ("repaired_tokens_mean", "repaired"),
    ("identical_to_exact", "=exact"),
    *QUALITY_COLUMNS,
]


def main() -> None:
    args = parse_args()
    if args.rescore:
        results = rescore(args.rescore)
    else:
        require_demo()
        results = run(args)
    summary = results["summary"]
    table = [[name, *(s.get(key) for key, _ in COLUMNS)] for name, s in summary.items()]
    n = summary[REFERENCE]["questions"]
    print_table(
        f"KV reuse on {n} demo questions, every prompt chunk precomputed "
        f"({results['chunk_nodes']} chunk nodes)",
        ["design", *(label for _, label in COLUMNS)],
        table,
    )
    for name, s in summary.items():
        if "vs_exact" in s:
            v = s["vs_exact"]
            facts, rouge = v["facts_ratio_ci95"], v["rouge_l_ratio_ci95"]
            print(
                f"{name} vs exact: facts {v['facts_ratio']:.3f}× [{facts[0]:.2f}, {facts[1]:.2f}]"
                f" (lost {v['facts_lost']}, gained {v['facts_gained']}, McNemar p "
                f"{v['mcnemar_p']:.2f}); ROUGE-L {v['rouge_l_ratio']:.3f}× "
                f"[{rouge[0]:.2f}, {rouge[1]:.2f}]"
            )
        if "vs_in_prompt" in s:
            v = s["vs_in_prompt"]
            print(
                f"{name} vs {name}/in-prompt: answers identical {v['identical_answers']:.2f}; "
                f"TTFT {v['ttft_ratio_median']:.3f}× (median of pairs), "
                f"{1e3 * v['ttft_saved_median_s']:.0f} ms less, faster in {v['faster_share']:.2f}"
            )
    if not args.rescore:
        write_results(args.out, results, {k: str(v) for k, v in vars(args).items()})


if __name__ == "__main__":
    main()
