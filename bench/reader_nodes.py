"""Covered questions with and without the reader's excerpt nodes (issue 47: TTFT of a covered
question ≤ 3 s on 2 cores). One run, side by side:

1. the questions' prompt chunks get their [system, chunk] nodes, as a night covering them would
   (the writer's; any-order reuse);
2. three copies of that home: "none" (no reader nodes), "headers" (the reader's node of each
   chunk's mail header) and "lines" (that, and one per line of three words or more after it),
   each made as the night's chunk job makes them ([precompute] reader_nodes), timed, with the
   bytes they take;
3. each question asked of the three copies in turn (bench/e2e.py's full-any design, the shipped
   repair at 1.5B; `--designs full-any-ev,full-any` asks each copy in both, each in a copy of
   its own): TTFT, the verdicts' time, total, expected strings, and the reader's verdicts, which
   must not change.

    python bench/reader_nodes.py --home H --questions Q [--model M] [--modes none,headers,lines]
                                 [--designs full-any] [--out reader_nodes]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import log, percentile, print_table, write_results  # noqa: E402
from e2e import ask, open_copy  # noqa: E402
from e2e_designs import DESIGNS, rotated  # noqa: E402
from e2e_questions import load_questions  # noqa: E402
from night_points import snapshot  # noqa: E402

MODES = ("none", "headers", "lines")
DESIGN = next(d for d in DESIGNS if d.name == "full-any")  # the nodes' reuse: any-order


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True, help="an imported home (copied)")
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--model", default="qwen2.5-coder-1.5b", help="writer and reader")
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--limit", type=int, default=0, help="the first N questions (0: all)")
    parser.add_argument("--modes", default=",".join(MODES), help="reader nodes: none,headers,lines")
    parser.add_argument("--designs", default="full-any", help="bench/e2e.py designs to ask in")
    parser.add_argument("--out", default="reader_nodes")
    return parser.parse_args()


def any_order(ctx):
    """`ctx` reusing chunk nodes in any order, as the design asks (the models: the environment,
    set in main, which every Services reads when it opens)."""
    ctx.settings.cache.reuse, ctx.settings.cache.repair = DESIGN.reuse
    return ctx


def cover(base: Path, questions) -> list[int]:
    """The [system, chunk] node of every question's prompt chunks, as the night's chunk job
    makes it (no reader nodes); returns the chunk ids."""
    from assistant.services import open_services

    ctx = any_order(open_services(base))
    pipe = ctx.answerer()
    chunks: dict[int, None] = {}
    for q in questions:
        vector = ctx.embedder.embed_batch([q.question])[0]
        hits, _ = pipe.quote(q.question, vector)
        chunks.update((h.chunk_id, None) for h in hits)
    handlers = handlers_of(ctx, "none")
    started = time.perf_counter()
    for chunk in chunks:
        handlers._chunk_kv({"chunk": chunk})
    log(f"{len(chunks)} chunk nodes in {time.perf_counter() - started:.0f} s")
    return list(chunks)


def handlers_of(ctx, mode: str):
    from assistant.precompute.runner import Precompute

    ctx.settings.precompute.reader_nodes = mode
    return Precompute(ctx.precompute_parts(), settle_seconds=0).handlers


def reader_nodes(home: Path, chunks: list[int], mode: str) -> dict:
    """The reader's nodes of `chunks` as the chunk job makes them under `mode`: seconds, nodes
    and bytes (the KV tree's growth)."""
    from assistant.services import open_services

    ctx = any_order(open_services(home))
    handlers = handlers_of(ctx, mode)
    before = ctx.kv.stats()
    records = ctx.store.chunk_records(chunks)
    started, made = time.perf_counter(), 0
    for record in records:
        made += handlers._reader_nodes(record)
    seconds = time.perf_counter() - started
    grown, n = ctx.kv.stats()["bytes"] - before["bytes"], max(1, len(records))
    return {"chunks": len(records), "nodes": made, "seconds": seconds, "bytes": grown,
            "seconds_per_chunk": seconds / n, "bytes_per_chunk": grown / n}  # fmt: skip


def summary(rows: list[dict], base: list[dict]) -> dict:
    """A variant's figures; its verdicts against `base`'s (the first variant's)."""

    def p50(key: str) -> float:
        return statistics.median(r[key] for r in rows)

    same = sum(
        a["reader_verdict"] == b["reader_verdict"]
        and abs((a["reader_margin"] or 0.0) - (b["reader_margin"] or 0.0)) < 0.01
        for a, b in zip(rows, base, strict=True)
    )
    return {"questions": len(rows), "ttft_p50_s": p50("ttft"),
            "ttft_p90_s": percentile([r["ttft"] for r in rows], 90),
            "ttft_mean_s": statistics.fmean(r["ttft"] for r in rows),
            "verdict_p50_s": p50("verdict"), "verdict_mean_s": statistics.fmean(
                r["verdict"] for r in rows),
            "total_mean_s": statistics.fmean(r["total"] for r in rows),
            "expected": sum(r["expected"] for r in rows) / len(rows),
            "reader_segments_restored": sum(r["restored"] for r in rows),
            "verdicts_as_without_nodes": same / len(rows)}  # fmt: skip


def main() -> None:
    args = parse_args()
    os.environ["ASSISTANT_MODELS_READER"] = os.environ["ASSISTANT_MODELS_WRITER"] = args.model
    questions = load_questions(args.questions)
    questions = questions[: args.limit] if args.limit else questions
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        base = root / "base"
        shutil.copytree(args.home, base, ignore=shutil.ignore_patterns("cache", "run"))
        chunks = cover(base, questions)
        modes = [m for m in args.modes.split(",") if m]
        designs = [next(d for d in DESIGNS if d.name == n) for n in args.designs.split(",")]
        # a variant's name: the reader nodes' mode, with the design where several are asked
        variants = {(f"{m}/{d.name}" if len(designs) > 1 else m): (m, d)
                    for m in modes for d in designs}  # fmt: skip
        made, ctxs = {}, {}
        for mode in modes:
            home = snapshot(base, root / mode)
            made[mode] = reader_nodes(home, chunks, mode) if mode != "none" else {}
            log(f"{mode}: {made[mode]}")
        from assistant.services import open_services

        base_ctx = any_order(open_services(base))
        for name, (mode, design) in variants.items():
            home = snapshot(root / mode, root / "asked" / name.replace("/", "-"))
            ctxs[name] = open_copy(design, base_ctx, home, args.max_tokens)
        rows: dict[str, list[dict]] = {v: [] for v in variants}
        for i, q in enumerate(questions):
            log(f"[{i + 1}/{len(questions)}] {q.question}")
            for name in rotated(tuple(variants), i):
                judge = ctxs[name].answerer().judge
                restored = judge.kv.restored if judge is not None else 0
                row = ask(ctxs[name], replace(variants[name][1], name=name), q)
                row["restored"] = (judge.kv.restored if judge is not None else 0) - restored
                rows[name].append(row)
    first = next(iter(variants))
    results = {v: summary(rows[v], rows[first]) | {"night": made[variants[v][0]]}
               for v in variants}  # fmt: skip
    print_table(
        "covered questions: the reader's excerpt nodes (writer and reader "
        f"{args.model}, {len(questions)} questions, every prompt chunk with its node)",
        ["reader nodes", "TTFT p50 s", "TTFT mean s", "verdicts p50 s", "total mean s",
         "expected", "same verdicts", "night s/chunk", "MB/chunk"],
        [[m, r["ttft_p50_s"], r["ttft_mean_s"], r["verdict_p50_s"], r["total_mean_s"],
          r["expected"], r["verdicts_as_without_nodes"],
          r["night"].get("seconds_per_chunk", 0.0),
          r["night"].get("bytes_per_chunk", 0) / 2**20] for m, r in results.items()],
    )  # fmt: skip
    params = {k: str(v) for k, v in vars(args).items()}
    write_results(args.out, {"modes": results, "rows": rows}, params)


if __name__ == "__main__":
    main()
