"""End to end: one question sequence through every cache design, side by side in one process.

Designs (bench/e2e_designs.py): naive; ragcache (KV tree, reactive); meancache (QA bank,
reactive); sleeptime (precompute answers predicted questions into the QA bank, no KV);
ragcache+meancache; full (PerCache: both layers + precompute, the strategy picked from τ);
full-any (full with any-order KV reuse, [cache] reuse = "any-order", repair none);
full-s2 (full at τ 0.85, below the decode cutoff, so predictions are decoded); full+pruned
(full with the pruned reranker; skipped, with the reason, where assistant/rerank is missing).

Each design gets its own copy of one imported home (knowledge db and index; an empty cache).
The designs that precompute get the same wall-clock budget first; its CPU-seconds are reported.
Then the questions are asked one by one; for each question every design answers it, in an order
rotated per question so no design always runs right after the same one. The questions are the
demo QA set (every n-th, `--limit`) with hand-written repeats of a few of them
(data/qa/repeats.jsonl: same words, a word or two changed, or a real paraphrase) placed six
questions after the original; `--questions FILE.jsonl` (and `--mailbox PATH`) for your own.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from _common import (  # noqa: E402
    QA_FILES,
    REPO,
    RESULTS_DIR,
    demo_context,
    log,
    print_table,
    require_demo,
    write_results,
)
from e2e_designs import DESIGNS, SINGLE_LAYER, Design, rotated, select, skip_reason  # noqa: E402
from e2e_questions import (  # noqa: E402
    Question,
    build_sequence,
    load_questions,
    load_repeats,
    spread,
)
from e2e_report import acceptance, diagnosis, summarise  # noqa: E402
from quality import has_expected, paired, ratio_interval, rouge_l  # noqa: E402

from assistant import events as p  # noqa: E402
from assistant.answer.answerer import CacheLayers  # noqa: E402
from assistant.importing.importer import Importer  # noqa: E402
from assistant.precompute.runner import Precompute, PrecomputeReport  # noqa: E402
from assistant.services import Services, open_services  # noqa: E402

REPEATS = REPO / "data" / "qa" / "repeats.jsonl"


@dataclass
class Run:
    design: Design
    ctx: Services | None = None
    skipped: str | None = None
    precompute: dict[str, Any] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)


# -- set-up -----------------------------------------------------------------------------------


def questions_for(args: argparse.Namespace) -> list[Question]:
    if args.questions:
        pool = load_questions(args.questions)
        repeats = load_repeats(args.repeats, pool) if args.repeats else []
    else:
        pool = [q for path in QA_FILES for q in load_questions(path)]
        repeats = load_repeats(args.repeats or REPEATS, pool)
    return build_sequence(spread(pool, args.limit), repeats)


def prepare_base(root: Path, args: argparse.Namespace) -> Services:
    """The imported home every design copies: `--home` copied, else a fresh import of the demo
    corpus or of `--mailbox`."""
    if args.mailbox is None:
        return demo_context(root, args.home)
    ctx = open_services(root / "home")
    log(f"importing {args.mailbox} once for all designs")
    report = Importer(ctx.store, ctx.embedder).run([args.mailbox])
    if report.errors:
        raise SystemExit(f"{args.mailbox}: import failed: {report.errors[:3]}")
    return ctx


def open_design(design: Design, base: Services, root: Path, max_tokens: int) -> Services:
    home = root / design.name
    shutil.copytree(base.home.root, home, ignore=shutil.ignore_patterns("cache", "run"))
    return open_copy(design, base, home, max_tokens)


def open_copy(design: Design, base: Services, home: Path, max_tokens: int) -> Services:
    """Services on `home` (a copy of the base home, its caches kept or not) set as `design`."""
    ctx = replace(open_services(home), _embedder=base.embedder)  # one embedder for all
    ctx.settings.answer.max_tokens = max_tokens
    if design.tau is not None:
        ctx.settings.cache.qa_threshold = design.tau
    if design.decode_cutoff is not None:
        ctx.settings.precompute.decode_cutoff = design.decode_cutoff
    if design.rerank is not None:
        ctx.settings.rerank = design.rerank
    if design.reuse is not None:
        ctx.settings.cache.reuse, ctx.settings.cache.repair = design.reuse
    pipe = ctx.answerer()
    pipe.select("warm up", pipe.embedder.embed_batch(["warm up"])[0])
    pipe.cache.complete("Hello", max_tokens=2, background=False)
    return ctx


def precompute(ctx: Services, design: Design, minutes: float) -> dict[str, Any]:
    """A night of `minutes` (`night`), as `night_result` reports it."""
    return night_result(ctx, night(ctx, design, minutes))


def night(
    ctx: Services, design: Design, minutes: float, so_far: PrecomputeReport | None = None
) -> PrecomputeReport:
    """Precompute runs (each predicts one stride of questions) until the budget is spent or a
    run finds nothing to do, their reports summed onto `so_far` (a night run in parts)."""
    deadline, total = time.time() + minutes * 60, so_far or PrecomputeReport()
    while time.time() < deadline:
        runner = Precompute(
            ctx.precompute_parts(), settle_seconds=0, kv=design.precompute != "qa_only"
        )
        report = runner.run(deadline=deadline)
        total = total.then(report)
        log(f"{design.name}: {report.summary()}")
        if report.jobs_done == 0 or report.stopped != "finished":
            break
    return total


def night_result(ctx: Services, total: PrecomputeReport) -> dict[str, Any]:
    """A night's time and jobs (`node_seconds`: its wall seconds up to its last chunk node), and
    its stores as they are now."""
    pipe = ctx.answerer()
    times = {"cpu_seconds": total.cpu_seconds, "wall_seconds": total.wall_seconds,
             "node_seconds": total.node_seconds}  # fmt: skip
    return times | {"jobs": total.by_kind, "qa_bank": pipe.qa.stats(), "kv_tree": pipe.kv.stats()}


# -- asking -----------------------------------------------------------------------------------


def ask(ctx: Services, design: Design, q: Question) -> dict[str, Any]:
    pipe = ctx.answerer()
    events = list(pipe.answer(q.question, CacheLayers(qa=design.qa, kv=design.kv)))
    done: p.AnswerDone = events[-1]
    ordered = next((e.chunk_ids for e in events if isinstance(e, p.ChunksOrdered)), [])
    reused = next((e for e in events if isinstance(e, p.KVReused)), None)
    depth = reused.segments if reused else 0  # none: a QA-bank hit
    judged = next((e for e in events if isinstance(e, p.QuoteJudged)), None)
    return {
        "id": q.id,
        "repeat_kind": q.repeat_kind,
        "answer": done.answer,
        "qa_hit": done.qa_hit,
        "kv_chunks": len(ordered),
        "kv_chunks_reused": max(0, depth - 1),  # segment 0 is the system prompt
        "kv_reused_tokens": done.kv_reused_tokens,
        "kv_reuse": done.kv_reuse,
        "kv_repaired": done.kv_repaired,
        "prompt_tokens": done.prompt_tokens,
        "rouge_l": rouge_l(done.answer, q.answer),
        "expected": has_expected(done.answer, q.must_contain),
        "reader_verdict": judged.verdict if judged else "",  # none: no reader, or a QA-bank hit
        "reader_margin": judged.margin if judged else None,
        **done.timings,
    }


def ask_all(runs: list[Run], questions: list[Question]) -> None:
    live = [r for r in runs if r.ctx is not None]
    for i, q in enumerate(questions):
        log(
            f"[{i + 1}/{len(questions)}] {q.question}" + (f" ({q.repeat_kind})" * bool(q.repeat_of))
        )
        for run in rotated(live, i):
            run.rows.append(ask(run.ctx, run.design, q))


# -- report -----------------------------------------------------------------------------------


def report(runs: list[Run], questions: list[Question], args: argparse.Namespace) -> None:
    designs = {r.design.name: design_result(r) for r in runs}
    checks = {
        name: acceptance(designs, name, SINGLE_LAYER)
        for name in designs
        if name.startswith("full") and "mean_s" in designs[name]
    }
    for name, check in checks.items():
        check["quality_ci95"] = paired_quality(runs, name)
    table(designs, checks, questions, args)
    out = args.json_out or RESULTS_DIR / "e2e.json"
    data = {
        "designs": designs,
        "acceptance": checks,
        "questions": [vars(q) for q in questions],
        "runs": {r.design.name: r.rows for r in runs if r.rows},
    }
    path = write_results("e2e", data, vars(args), path=out)
    plot(designs, path.with_suffix(".png"), len(questions))
    log(f"wrote {path} and {path.with_suffix('.png')}")


def paired_quality(runs: list[Run], name: str) -> dict[str, list[float]] | None:
    """Bootstrap 95% intervals of the design's quality ratios to naive, answer by answer."""
    rows = {r.design.name: r.rows for r in runs if r.rows}
    if "naive" not in rows or name not in rows:
        return None
    naive = {(x["id"], x["repeat_kind"]): x for x in rows["naive"]}
    pairs = [(x, naive[(x["id"], x["repeat_kind"])]) for x in rows[name]]
    out = {}
    for metric, key in (("rouge_l", "rouge_l"), ("expected_present", "expected")):
        values = paired(pairs, key)
        out[metric] = ratio_interval(values) if len(values) else None
    return out


def design_result(run: Run) -> dict[str, Any]:
    head = {"label": run.design.label}
    if run.skipped:
        return head | {"skipped": run.skipped}
    cpu = run.precompute.get("cpu_seconds", 0.0)
    result = head | summarise(run.rows) | {"precompute_cpu_s": cpu, "precompute": run.precompute}
    return result | {"diagnosis": diagnosis(result)}


def table(designs: dict, checks: dict, questions: list[Question], args) -> None:
    naive = designs.get("naive", {}).get("mean_s")
    rows = []
    for name, d in designs.items():
        if "skipped" in d:
            rows.append((name, "skipped", *[None] * 9))
            continue
        q = d["quality"]
        ratio = d["mean_s"] / naive if naive else None
        rows.append(
            (name, d["mean_s"], d["p50_s"], d["p90_s"], d["ttft_s"], ratio, d["qa_hit_rate"])
            + (d["kv_hit_rate"], q["rouge_l"], q["expected_present"], d["precompute_cpu_s"])
        )
    repeats = sum(bool(q.repeat_of) for q in questions)
    skipped = [f"{n} skipped: {d['skipped']}" for n, d in designs.items() if "skipped" in d]
    lines = [_check_line(c) + f"\n  {designs[n]['diagnosis']}" for n, c in checks.items()]
    print_table(
        f"End to end: {len(questions)} questions ({repeats} repeats), max {args.max_tokens} "
        f"tokens, precompute {args.precompute_minutes} min per precomputing design",
        ["design", "mean s", "p50 s", "p90 s", "TTFT s", "vs naive", "QA hit", "KV chunk hit"]
        + ["ROUGE-L", "expected", "precompute CPU-s"],
        rows,
        note="\n".join(skipped + lines),
    )


def _check_line(c: dict[str, Any]) -> str:
    if c.get("holds") is None:
        return f"{c['design']}: not checked ({c.get('why')})"
    verdict = "holds" if c["holds"] else "does NOT hold"
    if c.get("unchecked"):
        verdict += f" on the lines checked (not run: {', '.join(c['unchecked'])})"
    return (
        f"{c['design']}: {_times(c['vs_naive'])} naive, {_times(c['vs_best_single'])} best single "
        f"layer ({c['best_single']}); ROUGE-L {_times(c['rouge_l_vs_naive'])} naive, expected "
        f"strings {_times(c['expected_present_vs_naive'])} naive → acceptance {verdict}"
    )


def _times(ratio: float | None) -> str:
    return "–" if ratio is None else f"{ratio:.2f}×"


def plot(designs: dict[str, dict], path: Path, n_questions: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ran = {n: d for n, d in designs.items() if "mean_s" in d}
    names = list(ran)
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.8))
    x = range(len(names))
    left.bar(x, [ran[n]["mean_s"] for n in names], color="tab:blue", label="mean")
    left.scatter(x, [ran[n]["p90_s"] for n in names], color="black", marker="_", s=300, label="p90")
    left.scatter(x, [ran[n]["ttft_s"] for n in names], color="tab:orange", label="mean TTFT")
    left.set_ylabel("seconds per question")
    left.set_title(f"Latency over {n_questions} questions")
    right.bar([i - 0.2 for i in x], [ran[n]["quality"]["rouge_l"] for n in names], 0.4)
    right.bar([i + 0.2 for i in x], [ran[n]["quality"]["expected_present"] for n in names], 0.4)
    right.legend(["ROUGE-L", "expected strings present"], loc="lower right")
    right.set_title("Answer quality vs the reference answers")
    for ax in (left, right):
        ax.set_xticks(list(x), names, rotation=25, ha="right")
    left.legend()
    skipped = [f"{n} ({d['skipped']})" for n, d in designs.items() if "skipped" in d]
    if skipped:
        fig.text(0.01, 0.01, "skipped: " + "; ".join(skipped), fontsize=8)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


# -- main -------------------------------------------------------------------------------------


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mailbox", type=Path, help="a mailbox to import (needs --questions)")
    parser.add_argument("--questions", type=Path, help="JSONL: question, answer, must_contain")
    parser.add_argument("--repeats", type=Path, help="JSONL repeats (of, question, kind)")
    parser.add_argument("--limit", type=int, default=24, help="questions, spread over the set")
    parser.add_argument("--max-tokens", type=int, default=64, help="answer length cap")
    parser.add_argument("--precompute-minutes", type=float, default=8.0)
    parser.add_argument(
        "--designs", help="comma-separated subset of: " + ", ".join(d.name for d in DESIGNS)
    )
    parser.add_argument("--home", type=Path, help="an imported home to reuse (copied)")
    parser.add_argument("--json-out", type=Path, help="default bench/results/e2e.json")
    args = parser.parse_args()
    if args.mailbox and not args.questions:
        parser.error("--mailbox needs --questions (the demo QA set is about the demo corpus)")
    if args.mailbox and args.home:
        parser.error("--mailbox imports into a fresh home: leave out --home")
    if not (args.mailbox or args.home or args.questions):
        require_demo()
    return args


def main() -> None:
    args = parse_args()
    designs = select(args.designs)
    questions = questions_for(args)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        base = prepare_base(root, args)
        runs = [Run(d, skipped=skip_reason(d, base.settings)) for d in designs]
        for run in runs:
            if run.skipped is None:
                run.ctx = open_design(run.design, base, root, args.max_tokens)
        for run in runs:
            if run.ctx is not None and run.design.precompute:
                log(f"{run.design.name}: precomputing for {args.precompute_minutes} min")
                run.precompute = precompute(run.ctx, run.design, args.precompute_minutes)
        ask_all(runs, questions)
        report(runs, questions, args)


if __name__ == "__main__":
    main()
