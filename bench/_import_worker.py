"""One import of bench/import.py --against: reads an mbox into a fresh home with the importer of
the code in --code (this checkout, or a worktree of an earlier commit), then embeds its first
--embed-limit chunks, and prints one JSON line: mails and chunks, read seconds (wall and CPU),
embed seconds, and which package it ran.

Self-contained on purpose: it imports only what every version of the package has (Importer,
KnowledgeStore, open_db, open_home, make_embedder), so an older checkout runs it unchanged.
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"

# ruff: noqa: E402
import argparse
import json
import sys
import tempfile
import time
from pathlib import Path


def _paths(code: Path) -> None:
    """`code` first; this folder out (bench/cache.py would shadow the `cache` package)."""
    here = Path(__file__).resolve().parent
    sys.path[:] = [str(code), *(p for p in sys.path if Path(p or ".").resolve() != here)]


def run(mbox: Path, embed_limit: int) -> dict:
    import assistant
    from assistant.config import ChunkingSettings, EmbeddingSettings
    from assistant.home import open_home

    try:
        from assistant.importing.importer import Importer
    except ModuleNotFoundError:  # before the importer moved into importing/ (e.g. ace8a82)
        from assistant.importer import Importer  # type: ignore[no-redef]
    from assistant.knowledge.db import open_db
    from assistant.knowledge.embeddings import make_embedder
    from assistant.knowledge.store import KnowledgeStore

    settings = EmbeddingSettings()
    embedder = make_embedder(settings)
    embedder.embed_batch(["warm up"])  # loaded before reading, as `assistant import` does
    with tempfile.TemporaryDirectory(prefix="bench-import-vs-") as tmp:
        store = KnowledgeStore(open_db(open_home(Path(tmp)).knowledge_db))
        importer = Importer(store, embedder, ChunkingSettings(), settings.batch_size)
        cpu0 = time.process_time()
        report = importer.run([mbox], embed=False)
        read_cpu = time.process_time() - cpu0
        done: list[int] = []
        t0, cpu0 = time.perf_counter(), time.process_time()
        enough = lambda: bool(done) and done[-1] >= embed_limit  # noqa: E731
        importer.embed(lambda e: done.append(e.done), enough)
        embed_seconds, embed_cpu = time.perf_counter() - t0, time.process_time() - cpu0
    embedded = done[-1] if done else 0
    return {
        "package": str(Path(assistant.__file__).parent),
        "embedder": embedder.name,
        "mails": report.seen,
        "chunks": report.chunks_added,
        "read_seconds": report.read_seconds,
        "read_cpu_seconds": read_cpu,
        "embedded": embedded,
        "embed_seconds": embed_seconds,
        "embed_cpu_seconds": embed_cpu,
        "loadavg_1min": os.getloadavg()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", type=Path, required=True)
    parser.add_argument("--mbox", type=Path, required=True)
    parser.add_argument("--embed-limit", type=int, default=512)
    args = parser.parse_args()
    _paths(args.code.resolve())
    print(json.dumps(run(args.mbox, args.embed_limit)))


if __name__ == "__main__":
    main()
