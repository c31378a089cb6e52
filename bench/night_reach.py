"""How far a night must reach before a recent question's prompt comes from the KV tree (issue 33):
for each question of a set, the chunks its prompt is built from (the shipped selection, no
model) and where each stands in the night's coverage plan (assistant/precompute/coverage.py:
recency, live threads, the people the owner writes to; it reads the mail only). A night that
made nodes for the plan's first N chunks serves that share of the prompts' chunks from the tree.
N is turned into minutes at a measured pace: nodes per minute from a night bench's results
(bench/results/night_stop.json by default, a night on this machine) and the model's prefill
rate, measured here, which bounds it.

    python bench/night_reach.py --home /work/eval/home \
        --questions data/qa/skilling_recent.jsonl [--pace bench/results/night_stop.json]

Writes bench/results/night_reach.json.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

# ruff: noqa: E402
import argparse
import json
import time
from pathlib import Path

import numpy as np
from _common import log, print_table, write_results

from assistant.llm.model_file import default_llm_model, load_llama
from assistant.precompute import coverage
from assistant.services import open_services

SHARES = (0.25, 0.5, 0.8, 0.9)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument(
        "--pace",
        type=Path,
        default=Path(__file__).parent / "results" / "night_stop.json",
        help="a night bench's results: nodes after minutes",
    )
    parser.add_argument("--out", default="night_reach")
    return parser.parse_args()


def measured_pace(path: Path) -> float:
    """Nodes a minute, from the longest point of a night bench's results."""
    points = json.loads(path.read_text())["points"]
    last = max(points, key=lambda p: p["minutes"])
    return last["nodes"] / last["minutes"]


def prefill_rate(tokens: int = 256, threads: int = 2) -> float:
    """Tokens a second the shipped model prefills on `threads` threads (after a warm-up)."""
    llm = load_llama(default_llm_model(), 1024, threads)
    text = "The board approved the budget for the new trading floor on Friday. " * 40
    ids = llm.tokenize(text.encode())[:tokens]
    llm.eval(ids[:32])
    llm.reset()
    start = time.perf_counter()
    llm.eval(ids)
    return tokens / (time.perf_counter() - start)


def main() -> None:
    args = parse_args()
    ctx = open_services(args.home)
    store = ctx.store
    plan = coverage.plan(store.mail_headers(), store.chunk_documents(), {},
                         ctx.settings.mail.today)  # fmt: skip
    place = {chunk: i for i, chunk in enumerate(plan.chunks)}
    answerer = ctx.answerer()
    questions = [json.loads(line) for line in args.questions.read_text().splitlines() if line]
    places, recent = [], 0
    for q in questions:
        vector = ctx.embedder.embed_batch([q["question"]])[0]
        hits, _ = answerer.quote(q["question"], vector)
        ids = [h.record.chunk_id for h in hits]
        places += [place.get(i, len(plan.chunks)) for i in ids]
        recent += sum(i in plan.recent_chunks for i in ids)
    at = np.sort(np.array(places))
    pace = measured_pace(args.pace)
    tokens = [r.token_count for r in store.chunk_records(plan.chunks[:2000])]
    rate = prefill_rate()
    ceiling = rate / float(np.mean(tokens)) * 60  # nodes a minute if prefill were all a node cost
    rows, reach = [], {}
    for share in SHARES:
        n = int(at[min(int(np.ceil(share * len(at))) - 1, len(at) - 1)]) + 1
        reach[str(share)] = {"nodes": n, "minutes": n / pace, "minutes_at_ceiling": n / ceiling}
        rows.append([f"{share:.0%}", n, f"{n / pace:.0f}", f"{n / ceiling:.0f}"])
    curve = {str(m): float((at < m * pace).mean()) for m in (5, 10, 20, 40, 60, 120)}
    print_table(
        f"prompt chunks of {len(questions)} recent questions served from the tree, by the "
        f"plan's reach ({pace:.0f} nodes/min measured; prefill ceiling {ceiling:.0f})",
        ["share of prompt chunks", "plan's first N chunks", "minutes", "minutes at ceiling"],
        rows,
    )
    print_table("share after minutes", ["minutes", "share"],
                [[m, f"{s:.2f}"] for m, s in curve.items()])  # fmt: skip
    data = {
        "questions": len(questions),
        "prompt_chunks": len(at),
        "in_last_6_weeks": recent,
        "recent_chunks": len(plan.recent_chunks),
        "plan_chunks": len(plan.chunks),
        "nodes_per_minute": pace,
        "prefill_tokens_per_s": rate,
        "mean_chunk_tokens": float(np.mean(tokens)),
        "ceiling_nodes_per_minute": ceiling,
        "reach": reach,
        "share_after_minutes": curve,
    }
    log(f"wrote {write_results(args.out, data, vars(args))}")


if __name__ == "__main__":
    main()
