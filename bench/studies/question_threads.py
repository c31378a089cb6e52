"""A question the user waits for on the cores other processes leave free (LocalLLM.for_the_user)
vs the default threads (half the logical cores, what every question used before), side by side:
the same questions through the user's answer path with nothing cached (retrieve, quote, prefill,
decode), each asked by both in an order alternating per question.

Also a probe of why the choice is measured and not fixed: the model's prefill and decode pace on
1 thread and on every physical core, with the machine free and with one core kept busy by
another process.

    python bench/studies/question_threads.py [--home PATH] [--questions FILE] [--limit 24]
        [--busy 8] [--out question_threads]

The first `--busy` questions are then asked again with one core kept busy by another process:
there the choice must fall back to the default threads.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

from _common import (  # noqa: E402
    REPO,
    cli_import,
    default_eval_dir,
    log,
    print_table,
    write_results,
)
from e2e_questions import load_questions, spread  # noqa: E402
from quality import has_expected, ratio_interval  # noqa: E402

from assistant import events as p  # noqa: E402
from assistant.answer.answerer import CacheLayers  # noqa: E402
from assistant.llm.cores import CoreWatch, question_threads  # noqa: E402
from assistant.llm.model_file import default_llm_model, default_threads, physical_cores  # noqa: E402
from assistant.llm.runtime import LocalLLM  # noqa: E402
from assistant.services import Services, open_services  # noqa: E402

DESIGNS = ("default threads", "free cores")
NAIVE = CacheLayers(qa=False, kv=False)


def open_design(name: str, base: Path, root: Path, embedder=None) -> Services:
    home = root / name.replace(" ", "-")
    shutil.copytree(base, home, ignore=shutil.ignore_patterns("cache", "run"))
    ctx = open_services(home)
    if embedder is not None:
        ctx = replace(ctx, _embedder=embedder)
    # "default threads": [llm] n_threads set to today's default, which every question keeps
    ctx.settings.llm.n_threads = default_threads() if name == "default threads" else 0
    pipe = ctx.answerer()
    pipe.select("warm up", pipe.embedder.embed_batch(["warm up"])[0])
    pipe.cache.complete("Hello", max_tokens=2, background=False)
    return ctx


def watch_threads(ctx: Services) -> list[list[int]]:
    """Record the threads each question ran on (LocalLLM.for_the_user yields them), into the
    last list of the returned one (append a list to start a new phase)."""
    llm = ctx.answerer().cache.llm
    inner, phases = llm.for_the_user, [[]]

    @contextmanager
    def recorded():
        with inner() as n:
            phases[-1].append(n)
            yield n

    llm.for_the_user = recorded
    return phases


def ask(ctx: Services, question) -> dict[str, Any]:
    events = list(ctx.answerer().answer(question.question, NAIVE))
    done: p.AnswerDone = events[-1]
    return {
        "id": question.id,
        "answer": done.answer,
        "expected": has_expected(done.answer, question.must_contain),
        "prompt_tokens": done.prompt_tokens,
        "load": os.getloadavg()[0],
        **done.timings,
    }


# -- the probe: the model's pace by threads, free and with a core busy -------------------------


def _spin(stop, duty: float = 1.0) -> None:
    """Keep a core busy `duty` of the time (in 10 ms periods)."""
    while not stop.is_set():
        start = time.perf_counter()
        while time.perf_counter() - start < 0.01 * duty:
            pass
        if duty < 1.0:
            time.sleep(0.01 * (1.0 - duty))


def pace(threads: int, tokens: list[int], llm: LocalLLM) -> dict[str, float]:
    """Prefill 600 tokens, then 32 one-token evaluations (as decoding goes): tokens/s each, and
    the seconds of the whole, about a question's."""
    llm.use_threads(threads)
    llm.reset()
    start = time.perf_counter()
    llm.eval(tokens)
    prefill = time.perf_counter() - start
    start = time.perf_counter()
    for token in tokens[:32]:
        llm.eval([token])
    decode = time.perf_counter() - start
    return {
        "prefill_tps": len(tokens) / prefill,
        "decode_tps": 32 / decode,
        "seconds": prefill + decode,
    }


# another process keeping one core busy this share of the time
DUTIES = {
    "free": 0.0,
    "a core 1/4 busy": 0.25,
    "a core 1/2 busy": 0.5,
    "a core 3/4 busy": 0.75,
    "one core busy": 1.0,
}


def probe(rounds: int = 3) -> dict[str, Any]:
    """By how busy another process keeps a core: what CoreWatch measures over an idle second
    and a half (what a question's pause shows it), then the pace on 1 thread and on every
    physical core: where the cores stop paying is where llm/cores.py's SLACK belongs."""
    llm = LocalLLM(default_llm_model(), n_ctx=2048, n_threads=1)
    text = (REPO / "README.md").read_text(encoding="utf-8")
    tokens = llm.tokenize(text, first=True)[:600]
    cores = physical_cores()
    out: dict[str, Any] = {"physical_cores": cores}
    for machine, duty in DUTIES.items():
        stop, spinner = multiprocessing.Event(), None
        if duty > 0:
            spinner = multiprocessing.Process(target=_spin, args=(stop, duty), daemon=True)
            spinner.start()
        try:
            time.sleep(0.3)
            watch = CoreWatch()
            time.sleep(1.5)
            row: dict[str, Any] = {"others_measured": watch.others()}
            for threads in sorted({1, cores}):
                runs = [pace(threads, tokens, llm) for _ in range(rounds)]
                row[f"{threads} threads"] = {
                    k: float(np.median([r[k] for r in runs])) for k in runs[0]
                }
            row["time ratio"] = row[f"{cores} threads"]["seconds"] / row["1 threads"]["seconds"]
            row["threads chosen"] = question_threads(
                cores, default_threads(), row["others_measured"]
            )
            out[machine] = row
        finally:
            stop.set()
            if spinner is not None:
                spinner.join()
    return out


# -- the run ----------------------------------------------------------------------------------


def summary(rows: dict[str, list[dict]], used: list[int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    base = rows["default threads"]
    for name in DESIGNS:
        r = rows[name]
        out[name] = {
            "ttft_p50": float(np.median([x["ttft"] for x in r])),
            "total_p50": float(np.median([x["total"] for x in r])),
            "total_mean": float(np.mean([x["total"] for x in r])),
            "expected": float(np.mean([bool(x["expected"]) for x in r])),
        }
    new = rows["free cores"]
    for key in ("ttft", "total", "kv_load", "prefill", "decode"):
        pairs = np.array([[a[key], b[key]] for a, b in zip(new, base, strict=True)])
        out[f"{key} ratio"] = float(pairs[:, 0].sum() / pairs[:, 1].sum())
        out[f"{key} ratio 95%"] = ratio_interval(pairs)
    out["same answer"] = float(
        np.mean([a["answer"] == b["answer"] for a, b in zip(new, base, strict=True)])
    )
    out["threads used"] = {str(n): used.count(n) for n in sorted(set(used))}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--home", type=Path, help="the real mailbox imported (copied); default: imported now"
    )
    parser.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    parser.add_argument(
        "--questions", type=Path, default=REPO / "data" / "qa" / "skilling_recent.jsonl"
    )
    parser.add_argument("--limit", type=int, default=24)
    parser.add_argument("--probe-rounds", type=int, default=3)
    parser.add_argument("--busy", type=int, default=8, help="questions asked with a core busy")
    parser.add_argument("--out", default="question_threads")
    args = parser.parse_args()
    if args.home is not None and not (args.home / "knowledge.db").is_file():
        raise SystemExit(f"{args.home}: not an imported home (leave --home out to import one)")
    questions = spread(load_questions(args.questions), args.limit)
    log("probe: the model's pace by threads, free and with one core busy")
    paced = probe(args.probe_rounds)
    with tempfile.TemporaryDirectory(prefix="question-threads-") as tmp:
        home = args.home or cli_import(Path(tmp) / "real", "real", Path(tmp), args.eval_dir)
        first = open_design(DESIGNS[0], home, Path(tmp))
        runs = {
            DESIGNS[0]: first,
            DESIGNS[1]: open_design(DESIGNS[1], home, Path(tmp), first.embedder),
        }
        phases = watch_threads(runs["free cores"])
        rows: dict[str, list[dict]] = {name: [] for name in DESIGNS}
        for i, q in enumerate(questions):
            log(f"[{i + 1}/{len(questions)}] {q.question}")
            order = DESIGNS if i % 2 == 0 else DESIGNS[::-1]
            for name in order:
                rows[name].append(ask(runs[name], q))
        # the same first questions again with one core kept busy by another process: the
        # free-cores choice must fall back to the default, not slow the user's answer down
        busy: dict[str, list[dict]] = {name: [] for name in DESIGNS}
        phases.append([])
        stop = multiprocessing.Event()
        spinner = multiprocessing.Process(target=_spin, args=(stop,), daemon=True)
        spinner.start()
        try:
            time.sleep(1.0)
            for i, q in enumerate(questions[: args.busy]):
                log(f"[busy {i + 1}/{args.busy}] {q.question}")
                for name in DESIGNS if i % 2 == 0 else DESIGNS[::-1]:
                    busy[name].append(ask(runs[name], q))
        finally:
            stop.set()
            spinner.join()
    result = summary(rows, phases[0])
    result["one core busy"] = summary(busy, phases[1]) if args.busy else None
    table = [
        [
            name,
            f"{result[name]['ttft_p50']:.2f}",
            f"{result[name]['total_p50']:.2f}",
            f"{result[name]['total_mean']:.2f}",
            f"{result[name]['expected']:.2f}",
        ]
        for name in DESIGNS
    ]
    print_table(
        "a user's question, nothing cached",
        ["threads", "ttft p50 s", "total p50 s", "total mean s", "expected"],
        table,
    )
    lo, hi = result["total ratio 95%"]
    log(
        f"free cores / default: total {result['total ratio']:.2f} ({lo:.2f}-{hi:.2f}), "
        f"ttft {result['ttft ratio']:.2f}; same answer {result['same answer']:.2f}; "
        f"threads used {result['threads used']}"
    )
    cores = paced["physical_cores"]
    print_table(
        "the model's pace by how busy another process keeps a core",
        [
            "machine",
            "others measured",
            "prefill tok/s 1 · all",
            "decode tok/s 1 · all",
            "all ÷ 1 (time)",
            "threads chosen",
        ],
        [
            [
                k,
                f"{v['others_measured']:.2f}",
                f"{v['1 threads']['prefill_tps']:.0f} · {v[f'{cores} threads']['prefill_tps']:.0f}",
                f"{v['1 threads']['decode_tps']:.0f} · {v[f'{cores} threads']['decode_tps']:.0f}",
                f"{v['time ratio']:.2f}",
                v["threads chosen"],
            ]
            for k, v in paced.items()
            if isinstance(v, dict)
        ],
    )
    if result["one core busy"]:
        b = result["one core busy"]
        lo, hi = b["total ratio 95%"]
        log(
            f"one core busy: free cores / default total {b['total ratio']:.2f} "
            f"({lo:.2f}-{hi:.2f}); threads used {b['threads used']}"
        )
    path = write_results(
        args.out,
        {"summary": result, "probe": paced, "rows": rows, "busy_rows": busy},
        {k: str(v) for k, v in vars(args).items()},
    )
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
