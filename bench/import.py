"""Import of a ~6,000-mail mailbox, before (torch encoder) and after (the default), side by side.

    python bench/import.py [--copies 29] [--embed-limit 1500] [--after onnx,onnx-int8]

The mailbox is the demo mbox `--copies` times with every Message-ID made unique, made once under
/tmp/bench-cache. Each design imports it into a fresh home in a child process of its own: mails/s
(read: parse, chunk, store), chunks/s (embedding, the first `--embed-limit` chunks), and the
child's resident memory after start-up, after loading the encoder, after reading, and at its
peak. Writes bench/results/import.json.
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # never reach for the hub, even before the model loads

# ruff: noqa: E402
import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import (
    CACHE_DIR,
    DEMO_MBOX,
    REPO,
    log,
    print_table,
    require_demo,
    rss_mib,
    write_results,
)

_MESSAGE_ID = re.compile(rb"^Message-ID:\s*<([^<>\s]+)>", re.IGNORECASE | re.MULTILINE)
_ANGLE_ID = re.compile(rb"<([^<>\s]+)>")
BEFORE = "torch"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=29, help="copies of the demo mbox")
    parser.add_argument("--embed-limit", type=int, default=1500, help="chunks embedded per run")
    parser.add_argument("--after", default="onnx,onnx-int8", help="backends to compare")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # backend: run one import, print JSON
    parser.add_argument("--mbox", type=Path, help=argparse.SUPPRESS)
    return parser.parse_args()


def scaled_mbox(copies: int) -> Path:
    """The demo mbox `copies` times; every Message-ID (and reference to one) made unique."""
    out = CACHE_DIR / f"demo-x{copies}-{DEMO_MBOX.stat().st_size}.mbox"
    if out.exists():
        return out
    raw = DEMO_MBOX.read_bytes()
    if not raw.endswith(b"\n\n"):
        raw += b"\n" if raw.endswith(b"\n") else b"\n\n"
    ids = set(_MESSAGE_ID.findall(raw))
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    with tmp.open("wb") as fh:
        for i in range(copies):
            prefix = f"copy{i}.".encode()

            def rewrite(m: re.Match[bytes], prefix: bytes = prefix) -> bytes:
                return b"<" + prefix + m.group(1) + b">" if m.group(1) in ids else m.group(0)

            fh.write(_ANGLE_ID.sub(rewrite, raw))
    tmp.replace(out)
    return out


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(backend: str, mbox: Path, embed_limit: int) -> dict[str, Any]:
    """One import in this process: rates, and resident memory at each stage."""
    from assistant.config import ChunkingSettings, EmbeddingSettings
    from assistant.home import open_home
    from assistant.importer import Importer
    from assistant.knowledge.db import open_db
    from assistant.knowledge.embeddings import make_embedder
    from assistant.knowledge.store import KnowledgeStore

    memory = {"start": rss_mib()}
    settings = EmbeddingSettings(backend=backend)
    embedder = make_embedder(settings)
    embedder.embed_batch(["warm up"])
    memory["encoder_loaded"] = rss_mib()
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        home = open_home(Path(tmp))
        store = KnowledgeStore(open_db(home.knowledge_db))
        importer = Importer(store, embedder, ChunkingSettings(), settings.batch_size)
        report = importer.run([mbox], embed=False)
        memory["after_read"] = rss_mib()
        memory["peak_read"] = peak_mib()
        embedded: list[int] = []
        t0 = time.perf_counter()
        importer.embed(
            lambda e: embedded.append(e.done),
            lambda: bool(embedded) and embedded[-1] >= embed_limit,
        )
        embed_seconds = time.perf_counter() - t0
    done = embedded[-1] if embedded else 0
    return {
        "backend": backend,
        "embedder": embedder.name,
        "batch_size": getattr(embedder, "batch_size", settings.batch_size),
        "mails": report.seen,
        "read_seconds": report.read_seconds,
        "mails_per_second": report.seen / report.read_seconds,
        "chunks": report.chunks_added,
        "embedded": done,
        "embed_seconds": embed_seconds,
        "chunks_per_second": done / embed_seconds if embed_seconds else 0.0,
        "memory_mib": {**memory, "peak": peak_mib()},
        "loadavg_1min": os.getloadavg()[0],
    }


def run_child(backend: str, mbox: Path, limit: int) -> dict[str, Any]:
    log(f"{backend}: importing {mbox.name} in a child process")
    cmd = [sys.executable, __file__, "--child", backend, "--mbox", str(mbox)]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    out = subprocess.run(
        [*cmd, "--embed-limit", str(limit)], capture_output=True, text=True, env=env
    )
    if out.returncode:
        raise SystemExit(f"{backend}: the import failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    args = parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.mbox, args.embed_limit)))
        return
    require_demo(qa=False)
    mbox = scaled_mbox(args.copies)
    backends = [BEFORE, *args.after.split(",")]
    runs = {b: run_child(b, mbox, args.embed_limit) for b in backends}
    print_runs(runs, mbox)
    data = {"mbox_mib": mbox.stat().st_size / 2**20, "runs": runs}
    path = write_results("import", data, vars(args))
    print(f"wrote {path}")


def print_runs(runs: dict[str, dict[str, Any]], mbox: Path) -> None:
    base = runs[BEFORE]["chunks_per_second"]
    keys = [
        ("mails read", "mails"),
        ("mails/s (parse, chunk, store)", "mails_per_second"),
        ("chunks", "chunks"),
        ("chunks embedded (timed)", "embedded"),
        ("chunks/s (embedding)", "chunks_per_second"),
    ]
    rows = [("encoder", *(r["embedder"] for r in runs.values()))]
    rows += [(label, *(r[key] for r in runs.values())) for label, key in keys]
    rows.append(("  x before", *(r["chunks_per_second"] / base for r in runs.values())))
    for stage in ("start", "encoder_loaded", "after_read", "peak_read", "peak"):
        rows.append((f"RSS {stage}, MiB", *(r["memory_mib"][stage] for r in runs.values())))
    loads = " / ".join(f"{r['loadavg_1min']:.1f}" for r in runs.values())
    note = (
        f"{mbox.name} ({mbox.stat().st_size / 2**20:.0f} MiB); each design in its own process, one "
        f"after the other on a shared 2-core machine (1-min load after each: {loads}); "
        f"'{BEFORE}' is the encoder before this change"
    )
    print_table("Import: before / after", ["", *runs], rows, note, left=1)


if __name__ == "__main__":
    main()
