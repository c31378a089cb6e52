"""What the first N chunk nodes of a night cover, by plan: the coverage plan ("recent",
assistant/precompute/coverage.py) against newest-first by chunk id ("newest"; "access" is the
same with no asked questions). No model runs: the plan's order is read and measured.

    python bench/coverage_plan.py --home /tmp/night-home [--questions data/qa/skilling_recent.jsonl]

Measured per N: the share of the N chunks from the last six weeks of the mailbox, and the share
of the question set's source mails with a chunk among the N (the set is read only here, to
measure; the plan never sees it). Writes bench/results/coverage_plan.json.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from _common import print_table, write_results

from assistant.knowledge.db import open_db
from assistant.knowledge.store import KnowledgeStore
from assistant.precompute import coverage

NODES = (100, 400, 1000, 2000)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--home", type=Path, required=True, help="a COPY of a home (migrated)")
    parser.add_argument("--questions", type=Path, default=Path("data/qa/skilling_recent.jsonl"))
    args = parser.parse_args()
    store = KnowledgeStore(open_db(args.home / "knowledge.db"))
    start = time.perf_counter()
    chunks_of = store.chunk_documents()
    plan = coverage.plan(store.mail_headers(), chunks_of, {})
    seconds = time.perf_counter() - start
    sources = _source_chunks(store, chunks_of, args.questions)
    orders = {"recent": plan.chunks, "newest": store.chunk_ids()[::-1]}
    rows, data = [], {"plan_seconds": seconds, "chunks": len(plan.chunks),
                      "recent_chunks": len(plan.recent_chunks), "by_nodes": []}  # fmt: skip
    for n in NODES:
        for name, order in orders.items():
            first = set(order[:n])
            recent = len(first & plan.recent_chunks) / n
            found = sum(bool(ids & first) for ids in sources) / max(len(sources), 1)
            rows.append([n, name, f"{recent:.2f}", f"{found:.2f}"])
            data["by_nodes"].append({"nodes": n, "plan": name, "recent_share": recent,
                                     "question_mails_covered": found})  # fmt: skip
    print_table(
        "First N chunk nodes by plan", ["nodes", "plan", "last 6 weeks", "asked mails"], rows,
        note=f"{len(sources)} question source mails; plan made in {seconds:.2f}s",
    )  # fmt: skip
    write_results("coverage_plan", data, vars(args) | {"home": str(args.home)})


def _source_chunks(store: KnowledgeStore, chunks_of: dict, path: Path) -> list[set[int]]:
    by_message = {h.message_id.strip("<>"): h.doc_id for h in store.mail_headers()}
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        source = json.loads(line).get("source", "").strip("<>")
        if source in by_message:
            out.append(set(chunks_of.get(by_message[source], [])))
    return out


if __name__ == "__main__":
    main()
