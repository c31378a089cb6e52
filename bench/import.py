"""Import of a ~6,000-mail mailbox, before (torch encoder) and after (the default), side by side;
or this checkout's import beside an earlier commit's, by turns.

    python bench/import.py [--copies 29] [--embed-limit 0] [--before-limit 600]
                           [--designs torch,default] [--rate-designs ...]
                           [--rounds 5] [--sample 96] [--long-tokens 200] [--out import]
    python bench/import.py --against COMMIT [--mbox PATH | --mails 0] [--rounds 5]
                           [--embed-limit 512]

The mailbox is the demo mbox `--copies` times with every Message-ID made unique, made once under
/tmp/bench-cache. Each design imports it into a fresh home in a child process of its own: mails/s
(read: parse, chunk, store), chunks/s (embedding every chunk, or the first `--embed-limit`; the
torch design, too slow to embed them all, the first `--before-limit`), and the child's resident
memory after start-up, after loading the encoder, after reading, and at its peak (the whole
import). Those children run one after another, so on a shared machine their rates drift with its
load; the embedding rates to compare are from one more child that holds every rate design's
encoder and embeds the same texts with each in turn, `--rounds` times (medians; also CPU-ms per
chunk, which load moves far less): `--sample` demo chunks as the import makes them, and as many
texts of `--long-tokens` tokens (demo chunks joined and cut). Writes bench/results/import.json
(or --out).

With --against (bench/_import_vs.py): the dev mailbox (../shared/eval/mail, its first --mails
messages; or --mbox) imported by this checkout and by COMMIT in turn, --rounds turns, each in a
fresh process: read mails/s and chunks/s, and embedding chunks/s over the first --embed-limit
chunks, as min/median/max and the ratio turn by turn. Writes bench/results/import_vs_COMMIT.json.
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # never reach for the hub, even before the model loads

# ruff: noqa: E402
import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import (
    DEMO_MBOX,
    REPO,
    default_eval_dir,
    log,
    print_table,
    require_demo,
    rss_mib,
    write_results,
)
from big_home import scaled

BEFORE = "torch"
# design → (backend, OnnxEmbedder settings over the default: one text per run, one run per core)
DESIGNS: dict[str, tuple[str, dict[str, int]]] = {
    "torch": ("torch", {}),  # the first wave's encoder: sentence-transformers, batch 64
    "onnx-b8x2t": ("onnx", {"batch_size": 8, "workers": 1, "threads": 2}),  # before this change
    "onnx": ("onnx", {}),
    "onnx-int8-b8x2t": ("onnx-int8", {"batch_size": 8, "workers": 1, "threads": 2}),
    "onnx-int8-b1x2t": ("onnx-int8", {"workers": 1, "threads": 2}),  # one run, two threads
    "onnx-int8-b4": ("onnx-int8", {"batch_size": 4}),  # small length-sorted batches, per core
    "onnx-int8": ("onnx-int8", {}),
    "default": ("auto", {}),  # what a new home gets: [embedding] backend = "auto"
}
IMPORTS = "torch,default"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=29, help="copies of the demo mbox")
    parser.add_argument(
        "--embed-limit",
        type=int,
        help="chunks embedded per import (default: every one; 512 with --against)",
    )
    parser.add_argument(
        "--before-limit", type=int, default=600, help=f"chunks the {BEFORE} import embeds"
    )
    parser.add_argument("--designs", default=IMPORTS, help="designs that import the mailbox")
    parser.add_argument("--rate-designs", default=",".join(DESIGNS), help="designs timed in turn")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of the rate comparison")
    parser.add_argument("--sample", type=int, default=96, help="chunks per design per round")
    parser.add_argument("--long-tokens", type=int, default=200, help="tokens of the long texts")
    parser.add_argument("--out", default="import", help="results file name (no .json)")
    parser.add_argument("--against", help="an earlier commit: import by turns beside it")
    parser.add_argument("--mbox", type=Path, help="with --against: the mailbox to import")
    parser.add_argument("--mails", type=int, default=0, help="with --against: the dev mailbox's "
                        "first N messages (0: all)")  # fmt: skip
    parser.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    parser.add_argument("--child", help=argparse.SUPPRESS)  # design: run one import, print JSON
    return parser.parse_args()


def scaled_mbox(copies: int) -> Path:
    """The demo mbox `copies` times; every Message-ID (and reference to one) made unique."""
    return scaled(DEMO_MBOX, copies, f"demo-x{copies}-{DEMO_MBOX.stat().st_size}")


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def design_embedder(design: str):
    from assistant.config_sections import EmbeddingSettings
    from assistant.knowledge.embeddings import make_embedder

    backend, overrides = DESIGNS[design]
    embedder = make_embedder(EmbeddingSettings(backend=backend))
    for key, value in overrides.items():  # before its first use: the session reads them
        setattr(embedder, key, value)
    return embedder


def child(design: str, mbox: Path, embed_limit: int) -> dict[str, Any]:
    """One import in this process: rates, and resident memory at each stage."""
    from assistant.config_sections import ChunkingSettings, EmbeddingSettings
    from assistant.home import open_home
    from assistant.importing.importer import Importer
    from assistant.knowledge.db import open_db
    from assistant.knowledge.store import KnowledgeStore

    memory = {"start": rss_mib()}
    settings = EmbeddingSettings(backend=DESIGNS[design][0])
    embedder = design_embedder(design)
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
        t0, cpu0 = time.perf_counter(), time.process_time()
        importer.embed(
            lambda e: embedded.append(e.done),
            lambda: bool(embed_limit and embedded) and embedded[-1] >= embed_limit,
        )
        embed_seconds, embed_cpu = time.perf_counter() - t0, time.process_time() - cpu0
    done = embedded[-1] if embedded else 0
    return {
        "design": design,
        "backend": embedder.backend,  # "auto" resolved
        "embedder": embedder.name,
        "batch_size": getattr(embedder, "batch_size", settings.batch_size),
        "cpu_ms_per_chunk": 1000 * embed_cpu / max(done, 1),
        "mails": report.seen,
        "read_seconds": report.read_seconds,
        "mails_per_second": report.seen / report.read_seconds,
        "chunks": report.chunks_added,
        "embedded": done,
        "embed_seconds": embed_seconds,
        "chunks_per_second": done / embed_seconds if embed_seconds else 0.0,
        "all_embedded": done == report.chunks_added,
        "import_seconds": report.read_seconds + embed_seconds,
        "memory_mib": {**memory, "peak": peak_mib()},
        "loadavg_1min": os.getloadavg()[0],
    }


def demo_chunks(n: int, embedder) -> tuple[list[str], float]:
    """`n` chunks spread over the demo import's (every length), and their mean token count."""
    from assistant.importing.importer import Importer
    from assistant.knowledge.db import open_db
    from assistant.knowledge.store import KnowledgeStore

    store = KnowledgeStore(open_db(None))
    Importer(store, embedder).run([DEMO_MBOX], embed=False)
    ids = store.chunk_ids()
    records = store.chunk_records(ids[:: max(1, len(ids) // n)][:n])
    return [r.text for r in records], statistics.mean(r.token_count for r in records)


def long_texts(texts: list[str], tokens: int, n: int, tokenizer_file: Path) -> list[str]:
    """`n` texts of `tokens` model tokens each ([CLS] and [SEP] included): `texts` joined, cut."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    joined = " ".join(texts)
    offsets = tokenizer.encode(joined, add_special_tokens=False).offsets
    size = tokens - 2
    cuts = range(0, len(offsets) - size, size)
    return [joined[offsets[i][0] : offsets[i + size - 1][1]] for i in cuts][:n]


def rates(designs: list[str], rounds: int, sample: int, tokens: int) -> dict[str, Any]:
    """Every design's encoder in this one process, embedding the same texts in turn: demo
    chunks as the import makes them, then texts of `tokens` tokens."""
    encoders = {d: design_embedder(d) for d in designs}
    first = next(iter(encoders.values()))
    texts, mean_tokens = demo_chunks(sample, first)
    many, _ = demo_chunks(sample * 4, first)
    tokenizer = getattr(first, "tokenizer_file", None) or Path(first.path) / "tokenizer.json"
    long = long_texts(many, tokens, sample, tokenizer)
    for encoder in encoders.values():
        encoder.embed_batch(texts[:8])  # load and warm up
    return {
        "demo_chunks": timed_rounds(encoders, texts, rounds) | {"chunk_tokens_mean": mean_tokens},
        f"{tokens}_token_chunks": timed_rounds(encoders, long, rounds) | {"chunk_tokens": tokens},
    }


def timed_rounds(encoders: dict[str, Any], texts: list[str], rounds: int) -> dict[str, Any]:
    wall: dict[str, list[float]] = {d: [] for d in encoders}
    cpu: dict[str, list[float]] = {d: [] for d in encoders}
    for _ in range(rounds):
        for design, encoder in encoders.items():
            t0, cpu0 = time.perf_counter(), time.process_time()
            encoder.embed_batch(texts)
            wall[design].append(time.perf_counter() - t0)
            cpu[design].append(time.process_time() - cpu0)
    return {
        "chunks": len(texts),
        "rounds": rounds,
        "loadavg_1min": os.getloadavg()[0],
        "designs": {d: rate(encoders[d].name, len(texts), wall[d], cpu[d]) for d in encoders},
    }


def rate(name: str, n: int, wall: list[float], cpu: list[float]) -> dict[str, Any]:
    cpu_ms = 1000 * statistics.median(cpu) / n
    return {
        "embedder": name,
        "chunks_per_second": n / statistics.median(wall),
        "cpu_ms_per_chunk": cpu_ms,
        # the rate of 2 cores busy with this alone: the shared machine's load moves CPU time
        # far less than wall time
        "cpu_bound_chunks_per_second_2_cores": 2000 / cpu_ms,
        "wall_seconds": wall,
    }


def run_child(design: str, args: list[str]) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", design, *args]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode:
        raise SystemExit(f"{design}: the child failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    args = parse_args()
    if args.against:
        from _import_vs import against, dev_mailbox

        mbox = args.mbox or dev_mailbox(args.eval_dir, args.mails)
        limit = 512 if args.embed_limit is None else args.embed_limit
        path = against(args.against, mbox, args.rounds, limit, vars(args))
        print(f"wrote {path}")
        return
    args.embed_limit = args.embed_limit or 0
    if args.child == "rates":
        rate_designs = args.rate_designs.split(",")
        print(json.dumps(rates(rate_designs, args.rounds, args.sample, args.long_tokens)))
        return
    if args.child:
        print(json.dumps(child(args.child, args.mbox, args.embed_limit)))
        return
    require_demo(qa=False)
    mbox = scaled_mbox(args.copies)
    runs = {}
    for design in args.designs.split(","):
        limit = args.before_limit if design == BEFORE else args.embed_limit
        log(f"{design}: importing {mbox.name} in a child process")
        runs[design] = run_child(design, ["--mbox", str(mbox), "--embed-limit", str(limit)])
    log(f"embedding rates: {args.rate_designs} in turn, {args.rounds} rounds")
    side = ["--rate-designs", args.rate_designs, "--rounds", str(args.rounds)]
    side += ["--sample", str(args.sample), "--long-tokens", str(args.long_tokens)]
    side_by_side = run_child("rates", side)
    print_runs(runs, mbox)
    for texts, timed in side_by_side.items():
        print_rates(texts, timed)
    data = {"mbox_mib": mbox.stat().st_size / 2**20, "runs": runs, "rates": side_by_side}
    path = write_results(args.out, data, vars(args))
    print(f"wrote {path}")


def print_rates(texts: str, rates: dict[str, Any]) -> None:
    designs = rates["designs"]
    base = designs.get(BEFORE) or next(iter(designs.values()))
    rows = [
        (
            f"{d} ({r['embedder']})",
            r["chunks_per_second"],
            r["chunks_per_second"] / base["chunks_per_second"],
            r["cpu_ms_per_chunk"],
            base["cpu_ms_per_chunk"] / r["cpu_ms_per_chunk"],
            r["cpu_bound_chunks_per_second_2_cores"],
        )
        for d, r in designs.items()
    ]
    tokens = rates.get("chunk_tokens") or rates.get("chunk_tokens_mean")
    note = (
        f"the same {rates['chunks']} texts ({texts}, {tokens:.0f} tokens) per design, designs in "
        f"turn in one process, median of {rates['rounds']} rounds; 1-min load "
        f"{rates['loadavg_1min']:.1f} on 2 shared cores; 2000 / CPU-ms: the rate of 2 cores "
        "busy with this alone"
    )
    columns = ["design", "chunks/s", "x first", "CPU-ms/chunk", "x first (CPU)", "2000/CPU-ms"]
    print_table(f"Embedding side by side: {texts}", columns, rows, note)


def print_runs(runs: dict[str, dict[str, Any]], mbox: Path) -> None:
    base = runs[BEFORE]["chunks_per_second"] if BEFORE in runs else None
    keys = [
        ("mails read", "mails"),
        ("mails/s (parse, chunk, store)", "mails_per_second"),
        ("chunks", "chunks"),
        ("chunks embedded (timed)", "embedded"),
        ("chunks/s (embedding)", "chunks_per_second"),
        ("import seconds (read + embed)", "import_seconds"),
    ]
    rows = [("encoder", *(r["embedder"] for r in runs.values()))]
    rows += [(label, *(r[key] for r in runs.values())) for label, key in keys]
    if base:
        rows.append(("  x before", *(r["chunks_per_second"] / base for r in runs.values())))
    rows.append(("CPU-ms per chunk", *(r["cpu_ms_per_chunk"] for r in runs.values())))
    for stage in ("start", "encoder_loaded", "after_read", "peak_read", "peak"):
        rows.append((f"RSS {stage}, MiB", *(r["memory_mib"][stage] for r in runs.values())))
    loads = " / ".join(f"{r['loadavg_1min']:.1f}" for r in runs.values())
    note = (
        f"{mbox.name} ({mbox.stat().st_size / 2**20:.0f} MiB); each design in its own process, one "
        f"after the other on a shared 2-core machine (1-min load after each: {loads}); "
        f"'{BEFORE}' is the first wave's encoder (it embeds only its first chunks: too slow for "
        "all), RSS peak is the whole import's"
    )
    print_table("Import: before / after", ["", *runs], rows, note, left=1)


if __name__ == "__main__":
    main()
