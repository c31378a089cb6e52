"""A simulated night on a real mailbox (issue 33): precompute for M minutes, then the question
set; mean latency, KV-chunk and QA-bank hit rates and expected strings against M, for the
shipped design (full-any: both layers, precompute, any-order reuse with the repair measured
for the 1.5B writer, "none"; `--shipped full-any-ev` for the evidence repair of earlier runs)
beside naive and reactive KV reuse alone (ragcache), each M one run of bench/e2e.py on a copy of
the home. Also the night's coverage of the last six weeks' chunks and the projection of an
8-hour night from the nodes made per minute; a PNG of the curve beside the JSON.

With --one-night the points are one night, not one per M: the shipped design precomputes up to
each M in turn, and the questions are asked at each M on a copy of its home (the KV blobs
hard-linked: a blob is only ever replaced by rename), so answers never feed the night; naive and
reactive are asked once, beside the shipped design at the first M (or read from --baseline, an
earlier run's on the same home and questions: they do not precompute). A 0-10-30-60-120 curve
then costs 120 minutes of night, not 220. Each point is written to --keep as it is reached.

    python bench/night.py --home H [--questions data/qa/skilling_recent.jsonl]
                          [--minutes 0,5,10] [--reuse DIR] [--one-night --keep DIR] [--out night]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, RESULTS_DIR, log, print_table, write_results  # noqa: E402
from night_points import covered, projection, snapshot  # noqa: E402

BASELINES = ("naive", "ragcache")  # asked beside the shipped design (--shipped), which precomputes


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True, help="an imported home (copied)")
    parser.add_argument("--questions", type=Path,
                        default=REPO / "data" / "qa" / "skilling_recent.jsonl")  # fmt: skip
    parser.add_argument("--minutes", default="0,5,10")
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--baseline", type=Path, help="a bench/e2e.py JSON with naive and "
                        "ragcache already run on this home and set (they do not precompute: "
                        "only the shipped design is run again for each M)")  # fmt: skip
    parser.add_argument("--reuse", type=Path, help="a folder of this bench's e2e-M.json from "
                        "an earlier run: an M found there is read, not run again")  # fmt: skip
    parser.add_argument("--one-night", action="store_true", help="one night, asked at each M")
    parser.add_argument("--keep", type=Path, help="with --one-night: a folder for each point's "
                        "e2e-M.json as it is reached (kept if the run stops)")  # fmt: skip
    parser.add_argument("--shipped", default="full-any", choices=("full-any", "full-any-ev"),
                        help="the shipped design's repair: none (the 1.5B writer's, [cache] repair "
                        "auto) or evidence (runs before stop 59)")  # fmt: skip
    parser.add_argument("--out", default="night")
    args = parser.parse_args()
    if args.one_night and args.reuse:
        # one night's points are read from its own night: an earlier run's would be another's
        parser.error("--one-night runs its own points: leave out --reuse")
    if args.keep and not args.one_night:
        parser.error("--keep is where --one-night keeps its points: add --one-night")
    return args


def one_night(
    args: argparse.Namespace, minutes: float, work: Path, baseline: dict | None
) -> tuple[dict, dict, list[dict]]:
    """bench/e2e.py for `minutes` of precompute: its designs' results (naive and ragcache from
    `baseline` when given: they do not precompute), the results to use as the baseline, and
    the shipped design's rows."""
    shipped = args.shipped
    out = work / f"e2e-{minutes:g}.json"
    if args.reuse and (args.reuse / out.name).exists():
        out = args.reuse / out.name
        log(f"{minutes:g} min: read from {out}")
    else:
        run_e2e(args, minutes, out, [shipped] if baseline else [*BASELINES, shipped])
    ran = json.loads(out.read_text())
    got = ran["designs"]
    baseline = baseline or {d: got[d] for d in BASELINES}
    return baseline | {shipped: got[shipped]}, baseline, ran["runs"][shipped]


def read_baseline(args: argparse.Namespace) -> dict:
    """Naive and reactive from --baseline, which must have asked this run's questions on this
    run's home: another set's means are no baseline."""
    got = json.loads(args.baseline.read_text())
    asked = got.get("args", {})
    for key in ("home", "questions"):
        theirs, ours = asked.get(key), getattr(args, key)
        if theirs is not None and Path(theirs).resolve() != ours.resolve():
            sys.exit(f"{args.baseline}: its {key} is {theirs}, this run's is {ours}")
    return {d: v for d, v in got["designs"].items() if d in BASELINES}


def run_e2e(args: argparse.Namespace, minutes: float, out: Path, designs: list[str]) -> None:
    n = count_questions(args.questions)
    cmd = [
        sys.executable, str(REPO / "bench" / "e2e.py"), "--home", str(args.home),
        "--questions", str(args.questions), "--limit", str(n), "--designs", ",".join(designs),
        "--precompute-minutes", str(minutes), "--max-tokens", str(args.max_tokens),
        "--json-out", str(out),
    ]  # fmt: skip
    log(f"{minutes:g} min of precompute, then {n} questions ({', '.join(designs)})")
    subprocess.run(cmd, check=True, cwd=REPO)


def count_questions(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.strip())


def one_night_points(args: argparse.Namespace, baseline: dict | None) -> tuple[list[dict], int]:
    """The points of one night: precompute up to each M, ask on a snapshot of the home;
    naive and reactive beside the first, unless `baseline` holds them. Also the night's KV
    budget in bytes (sized to the free disk as its home opened, unless set)."""
    import e2e
    from e2e_designs import select

    from assistant.precompute.runner import PrecomputeReport

    n = count_questions(args.questions)
    questions = e2e.questions_for(argparse.Namespace(questions=args.questions, repeats=None,
                                                     limit=n))  # fmt: skip
    designs = {d.name: d for d in select(",".join([*BASELINES, args.shipped]))}
    shipped = designs[args.shipped]
    keep = args.keep or Path(tempfile.mkdtemp(prefix="night-points-"))
    keep.mkdir(parents=True, exist_ok=True)
    points, done, report = [], 0.0, PrecomputeReport()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        base = e2e.prepare_base(root, argparse.Namespace(mailbox=None, home=args.home))
        night = e2e.open_design(shipped, base, root / "night", args.max_tokens)
        budget = night.settings.cache.kv_budget_bytes
        for m in sorted(float(x) for x in args.minutes.split(",")):
            if m > done:
                log(f"the night goes on from {done:g} to {m:g} min")
                report = e2e.night(night, shipped, m - done, report)
                done = m
            total = e2e.night_result(night, report)
            home = snapshot(night.home.root, root / f"at-{m:g}" / shipped.name)
            runs = [e2e.Run(shipped, ctx=e2e.open_copy(shipped, base, home, args.max_tokens),
                            precompute=total)]  # fmt: skip
            if baseline is None:
                runs += [e2e.Run(designs[d], ctx=e2e.open_design(designs[d], base, root / "base",
                                 args.max_tokens)) for d in BASELINES]  # fmt: skip
            log(f"{m:g} min: {n} questions ({', '.join(r.design.name for r in runs)})")
            e2e.ask_all(runs, questions)
            got = {r.design.name: e2e.design_result(r) for r in runs}
            rows = {r.design.name: r.rows for r in runs}
            params = {k: str(v) for k, v in vars(args).items()} | {"minutes_now": m}
            write_results("night", {"designs": got, "runs": rows}, params,
                          path=keep / f"e2e-{m:g}.json")  # fmt: skip
            baseline = baseline or {d: got[d] for d in BASELINES}
            points.append(point(m, baseline | {shipped.name: got[shipped.name]},
                                rows[shipped.name], shipped.name))  # fmt: skip
            del runs  # the snapshot's models and stores go before its files
            shutil.rmtree(home.parent, ignore_errors=True)
    return points, budget


def point(minutes: float, designs: dict, rows: list[dict], shipped: str) -> dict:
    """One point of the curve from its designs' results and the shipped design's rows."""
    naive, reactive, full = (designs[d] for d in (*BASELINES, shipped))
    pre = full.get("precompute", {})
    nodes = pre.get("kv_tree", {}).get("nodes_with_kv", 0)
    return {
        "minutes": minutes,
        "full_mean_s": full["mean_s"],
        "naive_mean_s": naive["mean_s"],
        "reactive_mean_s": reactive["mean_s"],
        "full_vs_naive": full["mean_s"] / naive["mean_s"],
        "full_vs_reactive": full["mean_s"] / reactive["mean_s"],
        "kv_chunk_hit": full["kv_hit_rate"],
        "qa_hit": full["qa_hit_rate"],
        "expected_full": full["quality"]["expected_present"],
        "expected_naive": naive["quality"]["expected_present"],
        "nodes": nodes,
        "kv_bytes": pre.get("kv_tree", {}).get("bytes", 0),
        "jobs": pre.get("jobs", {}),
        "precompute_wall_s": pre.get("wall_seconds", 0.0),
        "node_seconds": pre.get("node_seconds", 0.0),
    } | covered(rows)


def recent_chunks(home: Path) -> int:
    """The chunks of the last six weeks' mail, as the night's plan counts them."""
    from assistant.precompute.runner import Precompute
    from assistant.services import open_services

    runner = Precompute(open_services(home).precompute_parts(), settle_seconds=0)
    return len(runner.planner.coverage().recent_chunks)


def plot(points: list[dict], path: Path, shipped: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [p["minutes"] for p in points]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for key, label in (("full_mean_s", f"shipped ({shipped})"), ("reactive_mean_s",
                       "reactive KV reuse"), ("naive_mean_s", "naive")):  # fmt: skip
        ax.plot(xs, [p[key] for p in points], marker="o", label=label)
    ax.set_xlabel("minutes of precompute")
    ax.set_ylabel("mean seconds per question")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main() -> None:
    args = parse_args()
    work = Path(tempfile.mkdtemp(prefix="night-"))
    baseline = read_baseline(args) if args.baseline else None
    points, budget = [], None
    if args.one_night:
        points, budget = one_night_points(args, baseline)
    else:
        for m in args.minutes.split(","):
            designs, baseline, rows = one_night(args, float(m), work, baseline)
            points.append(point(float(m), designs, rows, args.shipped))
    chunks = recent_chunks(args.home)
    proj = projection(points, chunks, budget)
    print_table(
        "A night on the real mailbox",
        ["minutes", "full s", "naive s", "reactive s", "full/naive", "full/reactive",
         "KV chunk hit", "QA hit", "expected full", "expected naive", "nodes",
         "covered q", "covered TTFT p50"],
        [[p["minutes"], p["full_mean_s"], p["naive_mean_s"], p["reactive_mean_s"],
          p["full_vs_naive"], p["full_vs_reactive"], p["kv_chunk_hit"], p["qa_hit"],
          p["expected_full"], p["expected_naive"], p["nodes"], p["covered_questions"],
          p["ttft_p50_covered_s"]] for p in points],
        note=f"projection: {proj}",
    )  # fmt: skip
    plot(points, RESULTS_DIR / f"{args.out}.png", args.shipped)
    params = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}
    write_results(args.out, {"points": points, "projection": proj, "recent_chunks": chunks},
                  params)  # fmt: skip


if __name__ == "__main__":
    main()
