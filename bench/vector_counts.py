"""Whether every chunk has a vector of the encoder in use, as every search and question asks it
(knowledge/vector_rows.py `has_unembedded`): the join it was (each chunk's vector looked up,
reading the vectors' pages) against the two counts on indexes it is now (migration 0014), on a
copy of a large home (bench/big_home.py's, 307,680 chunks), median of --rounds each; and the
one-time cost of the migration on that home (the orphan sweep and the index).

    python bench/vector_counts.py --home /tmp/bench-cache/big-home-x48 [--rounds 7] [--out NAME]
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import print_table, write_results  # noqa: E402

from assistant.knowledge.db import open_db  # noqa: E402
from assistant.knowledge.store import KnowledgeStore  # noqa: E402

JOIN = (
    "SELECT 1 FROM chunks c LEFT JOIN embeddings e ON e.chunk_id = c.id "
    "WHERE e.chunk_id IS NULL OR e.model != ? ORDER BY c.id DESC LIMIT 1"
)


def timed(call, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--out", default="vector_counts")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        db = Path(tmp) / "knowledge.db"
        shutil.copyfile(args.home / "knowledge.db", db)
        conn = sqlite3.connect(db)  # as a home before the migration
        conn.execute("DROP INDEX IF EXISTS embeddings_model")
        conn.execute("DELETE FROM _migrations WHERE name = '0014_embeddings_model'")
        conn.commit()
        chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        model = conn.execute("SELECT model FROM embeddings LIMIT 1").fetchone()[0]
        before = timed(lambda: conn.execute(JOIN, [model]).fetchall(), args.rounds)
        conn.close()
        started = time.perf_counter()
        store = KnowledgeStore(open_db(db))
        migration = time.perf_counter() - started
        after = timed(lambda: store.has_unembedded(model), args.rounds)
        embedded = not store.has_unembedded(model)
    rows = [("join (before)", f"{before * 1000:.1f}"), ("counts (now)", f"{after * 1000:.1f}")]
    print_table(
        "every chunk embedded? (ms, median)",
        ["query", "ms"],
        rows,
        note=f"{chunks:,} chunks; migration 0014 on open: {migration:.2f} s once; "
        f"ratio {after / before:.3f}",
    )
    data = {
        "chunks": chunks,
        "join_s": before,
        "counts_s": after,
        "ratio": after / before,
        "migration_s": migration,
        "all_embedded": embedded,
    }
    write_results(args.out, data, vars(args) | {"home": str(args.home)})


if __name__ == "__main__":
    main()
