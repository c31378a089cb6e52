"""Import throughput: the demo corpus with the real embedder, and parse+store on a larger mbox.

    python bench/import.py [--scale N]

Writes bench/results/import.json.
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # never reach for the hub, even before the model loads

# ruff: noqa: E402
import argparse
import re
import tempfile
from pathlib import Path
from typing import Any

from _common import (
    DEMO_MBOX,
    FakeEmbedder,
    import_demo,
    log,
    print_table,
    require_demo,
    timed,
    write_results,
)

from assistant.config import ChunkingSettings, EmbeddingSettings
from assistant.home import open_home
from assistant.importer import Importer, ImportReport
from assistant.knowledge.db import open_db
from assistant.knowledge.embeddings import make_embedder
from assistant.knowledge.store import KnowledgeStore

_MESSAGE_ID = re.compile(rb"^Message-ID:\s*<([^<>\s]+)>", re.IGNORECASE | re.MULTILINE)
_ANGLE_ID = re.compile(rb"<([^<>\s]+)>")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--scale", type=int, default=20, help="copies of the demo mbox in the scaling run"
    )
    return parser.parse_args()


def fresh_store(root: Path) -> tuple[KnowledgeStore, Path]:
    home = open_home(root)
    return KnowledgeStore(open_db(home.knowledge_db)), home.knowledge_db


def rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("nan")


def bench_demo(tmp: Path) -> dict[str, Any]:
    store, db_path = fresh_store(tmp / "demo")
    embedder = make_embedder(EmbeddingSettings())
    log("loading the embedding model")
    _, load_seconds = timed(lambda: embedder.embed_batch(["warm up"]))
    log("importing the demo corpus (real embedder)")
    loadavg_before = os.getloadavg()[0]
    report = import_demo(store, embedder)
    stats = store.stats()
    return {
        "embedder": embedder.name,
        "model_load_seconds": load_seconds,
        "messages": report.seen - stats["notes"],  # notes are never duplicates
        "messages_stored": stats["emails"],
        "notes": stats["notes"],
        "loadavg_1min": [loadavg_before, os.getloadavg()[0]],
        **report_numbers(report),
        "chunk_tokens": stats["chunk_tokens"],
        "db_mib": db_path.stat().st_size / 2**20,
    }


def report_numbers(report: ImportReport) -> dict[str, Any]:
    return {
        "items_seen": report.seen,
        "added": report.added,
        "duplicates": report.duplicates,
        "read_seconds": report.read_seconds,
        "items_per_second": rate(report.seen, report.read_seconds),
        "chunks": report.chunks_added,
        "embedded": report.embedded,
        "embed_seconds": report.embed_seconds,
        "chunks_per_second": rate(report.embedded, report.embed_seconds),
        "errors": len(report.errors),
        "warnings": len(report.warnings),
    }


def scaled_mbox(copies: int, out: Path) -> Path:
    """The demo mbox `copies` times; every Message-ID (and reference to one) made unique."""
    raw = DEMO_MBOX.read_bytes()
    if not raw.endswith(b"\n\n"):
        raw += b"\n" if raw.endswith(b"\n") else b"\n\n"
    ids = set(_MESSAGE_ID.findall(raw))
    with out.open("wb") as fh:
        for i in range(copies):
            prefix = f"copy{i}.".encode()

            def rewrite(m: re.Match[bytes], prefix: bytes = prefix) -> bytes:
                return b"<" + prefix + m.group(1) + b">" if m.group(1) in ids else m.group(0)

            fh.write(_ANGLE_ID.sub(rewrite, raw))
    return out


def bench_scaled(tmp: Path, copies: int) -> dict[str, Any]:
    root = tmp / f"scale{copies}"
    store, db_path = fresh_store(root)
    mbox = scaled_mbox(copies, root / "scaled.mbox")
    log(f"importing {copies}x the demo mbox ({mbox.stat().st_size / 2**20:.1f} MiB, fake embedder)")
    importer = Importer(store, FakeEmbedder(), ChunkingSettings(), embed_batch=64)
    report = importer.run([mbox])
    return {
        "copies": copies,
        "mbox_mib": mbox.stat().st_size / 2**20,
        "mib_per_second": mbox.stat().st_size / 2**20 / report.read_seconds,
        **report_numbers(report),
        "db_mib": db_path.stat().st_size / 2**20,
    }


def stored_note(demo: dict[str, Any]) -> str:
    dups = demo["messages"] - demo["messages_stored"]
    return f"{demo['messages_stored']} stored" + (f", {dups} duplicates" if dups else "")


def print_demo(demo: dict[str, Any]) -> None:
    rows = [
        ("messages read", demo["messages"], stored_note(demo)),
        ("notes read", demo["notes"], ""),
        ("errors / warnings", f"{demo['errors']} / {demo['warnings']}", ""),
        ("model load (first embed_batch)", demo["model_load_seconds"], "s"),
        ("read: parse + chunk + store", demo["read_seconds"], "s"),
        ("items/s (parse+store)", demo["items_per_second"], "items/s"),
        ("chunks", demo["chunks"], f"{demo['chunk_tokens']:,} tokens"),
        ("embed (model loaded)", demo["embed_seconds"], "s"),
        ("chunks/s (embedding)", demo["chunks_per_second"], "chunks/s"),
        ("database size", demo["db_mib"], "MiB"),
        (
            "load average (1 min) before / after",
            "{:.1f} / {:.1f}".format(*demo["loadavg_1min"]),
            "",
        ),
    ]
    note = f"embedder {demo['embedder']}, CPU; model load measured before the import"
    print_table("Import: demo corpus (mbox + notes)", ["", "value", "unit"], rows, note, left=1)


def print_scaling(runs: list[dict[str, Any]]) -> None:
    columns = ["mbox", "MiB", "messages", "added", "chunks", "read s", "items/s", "MiB/s"]
    columns += ["fake embed s", "chunks/s (store)"]
    rows = [
        (
            f"demo x{r['copies']}",
            r["mbox_mib"],
            r["items_seen"],
            r["added"],
            r["chunks"],
            r["read_seconds"],
            r["items_per_second"],
            r["mib_per_second"],
            r["embed_seconds"],
            r["chunks_per_second"],
        )
        for r in runs
    ]
    note = (
        "Message-IDs rewritten per copy; embedding skipped with a fake embedder (random unit "
        "vectors), so 'fake embed s' is only the SQLite cost of storing vectors"
    )
    print_table("Import scaling: parse + chunk + store", columns, rows, note)


def main() -> None:
    args = parse_args()
    require_demo(qa=False)
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        demo = bench_demo(Path(tmp))
        scaling = [bench_scaled(Path(tmp), n) for n in sorted({1, args.scale})]
    print_demo(demo)
    print_scaling(scaling)
    path = write_results("import", {"demo": demo, "scaling": scaling}, vars(args))
    print(f"wrote {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}")


if __name__ == "__main__":
    main()
