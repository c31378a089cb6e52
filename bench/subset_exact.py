"""A filtered search on a large home (knowledge/retrieval.py EXACT_SUBSET_MAX): every chunk the
filter leaves scored exactly (`LargeSearch.rank_subset`: BM25 by rowid, cosine from each stored
vector) against FTS5 and the IVF index asked for more candidates, those outside the filter
dropped (`rank_within`), on bench/big_home.py's home: seconds (median of 3) and how many of the
exact top 10 the approximation keeps, for the chunks of senders' mail (a person's filter: the
subsets a question naming someone leaves) of about --sizes chunks.

    python bench/subset_exact.py --home /tmp/bench-cache/big-home-x48 [--sizes 1000,3000,10000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from _common import print_table, write_results  # noqa: E402

from assistant.services import open_services  # noqa: E402

QUESTIONS = [
    "What did he say about the California power crisis?",
    "When is the board meeting?",
    "What was the budget for the conference?",
]


def median_time(call) -> tuple[float, object]:
    times, out = [], None
    for _ in range(3):
        started = time.perf_counter()
        out = call()
        times.append(time.perf_counter() - started)
    return statistics.median(times), out


def senders_near(store, size: int, count: int = 2) -> list[tuple[str, np.ndarray]]:
    """`count` senders whose mail holds about `size` chunks (within a factor of 2)."""
    rows = store.db.execute(
        "SELECT d.sender, count(*) AS n FROM chunks c JOIN documents d ON d.id = c.document_id "
        "WHERE d.kind = 'email' GROUP BY d.sender HAVING n BETWEEN ? AND ? "
        "ORDER BY abs(n - ?) LIMIT ?",
        [size // 2, size * 2, size, count],
    ).fetchall()
    out = []
    for sender, _ in rows:
        ids = store.db.execute(
            "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id "
            "WHERE d.sender = ? ORDER BY c.id",
            [sender],
        ).fetchall()
        out.append((sender, np.array([i for (i,) in ids], dtype=np.int64)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--sizes", default="1000,3000,10000")
    parser.add_argument("--out", default="subset_exact")
    args = parser.parse_args()
    ctx = open_services(args.home)
    large = ctx.retriever.large()
    assert large is not None, "not a large home"
    rows, data = [], []
    for size in (int(s) for s in args.sizes.split(",")):
        for sender, ids in senders_near(ctx.store, size):
            for q in QUESTIONS:
                vec = ctx.embedder.embed_batch([q])[0]
                large.rank(q, "hybrid", lambda v=vec: v)  # warm

                def ranked(how, q=q, vec=vec, ids=ids):
                    return how(q, "hybrid", lambda: vec, ids)

                t_exact, exact = median_time(lambda: ranked(large.rank_subset))
                t_within, within = median_time(lambda: ranked(large.rank_within))
                top = set(exact[0][0][:10].tolist()) if exact[0] is not None else set()
                kept = set(within[0][0][:10].tolist()) if within[0] is not None else set()
                data.append(
                    {"sender": sender, "chunks": len(ids), "question": q, "exact_s": t_exact,
                     "within_s": t_within, "top10_kept": len(top & kept), "top10": len(top)}
                )  # fmt: skip
                rows.append((sender[:28], len(ids), q[:24], f"{t_exact:.3f}", f"{t_within:.3f}",
                             f"{len(top & kept)}/{len(top)}"))  # fmt: skip
    print_table(
        "a person's filter on a large home: exact vs widened (s, median of 3)",
        ["sender", "chunks", "question", "exact s", "within s", "exact top 10 kept"],
        rows,
        note=f"{large.chunk_count():,} chunks",
    )
    write_results(
        args.out,
        {"chunks": large.chunk_count(), "rows": data},
        vars(args) | {"home": str(args.home)},
    )


if __name__ == "__main__":
    main()
