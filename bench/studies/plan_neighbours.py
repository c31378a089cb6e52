"""Would the night reach recent questions' prompts sooner if, after the mail of the last six
weeks, it covered the chunks most like that mail? (issue 47: at 1.5B half the dev mailbox's
recent questions' prompt chunks are older than six weeks, and the shipped plan reaches them
late, bench/results/night_reach_1_5b.json.) No model: the shipped plan's order against a
variant that keeps the plan's first K chunks (K = the last six weeks' chunks), then orders the
rest by their highest cosine to any of those chunks (dense vectors of the index), the plan's
last chunks (bulk mail, copies) still last. Measured as bench/night_reach.py measures: the
share of the questions' retrieved chunks among the first N of each order.

    python bench/studies/plan_neighbours.py --home H --questions Q [--today 2001-04-05]
        [--nodes 1168,2336,4672] [--out plan_neighbours]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common

from _common import log, print_table, write_results  # noqa: E402


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True, help="an imported home (copied)")
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--today", default="", help="[mail] today (ISO date): the plan's now")
    parser.add_argument("--nodes", default="1168,2336,4672", help="60, 120, 240 min at 1.5B")
    parser.add_argument("--out", default="plan_neighbours")
    return parser.parse_args()


def neighbours_first(plan, ids: np.ndarray, matrix: np.ndarray) -> list[int]:
    """The plan's first len(recent) chunks, then the rest by their highest cosine to one of
    the recent chunks, the plan's tail (bulk mail and copies) kept last."""
    head = plan.chunks[: len(plan.recent_chunks)]
    tail_n = plan.bulk_chunks + plan.copies
    tail = plan.chunks[len(plan.chunks) - tail_n :] if tail_n else []
    middle = plan.chunks[len(head) : len(plan.chunks) - tail_n]
    row = {int(c): i for i, c in enumerate(ids)}
    unit = matrix.astype(np.float32)
    unit /= np.maximum(np.linalg.norm(unit, axis=1, keepdims=True), 1e-9)
    recent = unit[[row[c] for c in plan.recent_chunks if c in row]]
    best = np.full(len(ids), -1.0, dtype=np.float32)
    for start in range(0, len(recent), 256):
        best = np.maximum(best, (unit @ recent[start : start + 256].T).max(axis=1))
    score = {c: float(best[row[c]]) if c in row else -1.0 for c in middle}
    return head + sorted(middle, key=lambda c: -score[c]) + tail


def main() -> None:
    args = parse_args()
    from assistant.precompute import coverage
    from assistant.services import open_services

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        shutil.copytree(args.home, home, ignore=shutil.ignore_patterns("cache", "run"))
        ctx = open_services(home)
        ctx.settings.mail.today = args.today or ctx.settings.mail.today
        store = ctx.store
        plan = coverage.plan(store.mail_headers(), store.chunk_documents(), {},
                             ctx.settings.mail.today)  # fmt: skip
        dense = ctx.retriever.dense_index()
        near = neighbours_first(plan, dense.ids, dense.matrix)
        orders = {"shipped plan": plan.chunks, "recent, then their neighbours": near}
        answerer = ctx.answerer()
        lines = args.questions.read_text().splitlines()
        chunks: list[int] = []
        for q in (json.loads(x) for x in lines if x.strip()):
            vector = ctx.embedder.embed_batch([q["question"]])[0]
            hits, _ = answerer.quote(q["question"], vector)
            chunks += [h.record.chunk_id for h in hits]
    budgets = [int(n) for n in args.nodes.split(",")]
    results, rows = {}, []
    for name, order in orders.items():
        place = {c: i for i, c in enumerate(order)}
        at = np.array([place.get(c, len(order)) for c in chunks])
        shares = {str(n): float((at < n).mean()) for n in budgets}
        reach = {str(s): int(np.sort(at)[int(np.ceil(s * len(at))) - 1]) + 1 for s in (0.8, 0.9)}
        results[name] = {"share_at_nodes": shares, "nodes_to_reach": reach}
        rows.append([name, *[f"{shares[str(n)]:.3f}" for n in budgets], reach["0.8"],
                     reach["0.9"]])  # fmt: skip
    print_table(
        f"the questions' {len(chunks)} retrieved chunks among a night's first N nodes",
        ["order", *[f"N={n}" for n in budgets], "N for 0.8", "N for 0.9"], rows,
    )  # fmt: skip
    data = {"prompt_chunks": len(chunks), "recent_chunks": len(plan.recent_chunks),
            "plan_chunks": len(plan.chunks), "orders": results}  # fmt: skip
    log(f"wrote {write_results(args.out, data, {k: str(v) for k, v in vars(args).items()})}")


if __name__ == "__main__":
    main()
