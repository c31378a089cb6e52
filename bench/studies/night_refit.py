"""The night's line-scorer refit (precompute's fit_lines job), run alone on a copy of a home,
so that its weights can be measured against the shipped ones by bench/evidence_lines.py.

    python bench/studies/night_refit.py --home H --keep DIR [--seed S]

The job is the one a night runs (precompute/handlers.py `_fit_lines`: the writer writes
FIT_LINES questions about lines of this mail, a trial fit on part of them must beat the weights
in use on the rest). Its seed is the planner's for this many chunks unless given. DIR is the
home copy, with the refitted weights in its cache when the trial passed; then

    python bench/evidence_lines.py --home DIR …     (the refit)
    python bench/evidence_lines.py --home H …       (the shipped weights)

Writes bench/results/NAME.json: whether the weights were replaced, the weights, the time, and
NAME_written.json: the questions the writer wrote (bench/studies/refit_trial.py replays the
trial on them).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

from _common import RESULTS_DIR, log, write_results  # noqa: E402

from assistant.answer import fit  # noqa: E402
from assistant.precompute.planner import fit_lines_step  # noqa: E402
from assistant.precompute.runner import Precompute  # noqa: E402
from assistant.services import LINE_WEIGHTS, open_services  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True, help="an imported home (copied)")
    parser.add_argument("--keep", type=Path, required=True, help="where the copy goes (new)")
    parser.add_argument("--seed", type=int, help="default: the planner's for the chunk count")
    parser.add_argument("--out", default="night_refit")
    args = parser.parse_args()
    if args.keep.exists():
        parser.error(f"{args.keep} exists: name a new folder")
    shutil.copytree(args.home, args.keep, ignore=shutil.ignore_patterns("cache", "run"))
    ctx = open_services(args.keep)
    chunks = ctx.store.count_chunks()
    seed = args.seed if args.seed is not None else fit_lines_step(chunks)
    written = _recorded()
    runner = Precompute(ctx.precompute_parts(), settle_seconds=0)
    runner.queue.enqueue("fit_lines", f"fit_lines:{seed}", {"seed": seed}, 0)
    job = runner.queue.claim(("fit_lines",))
    start = time.perf_counter()
    runner.handlers.run(job)
    runner.queue.finish(job, 0.0)
    seconds = time.perf_counter() - start
    path = ctx.home.cache_dir / LINE_WEIGHTS
    weights = json.loads(path.read_text()) if path.exists() else None
    log(f"refit in {seconds:.0f} s: {'replaced' if weights else 'kept'} the weights in use")
    results = {"chunks": chunks, "seed": seed, "seconds": seconds, "replaced": bool(weights)}
    path = RESULTS_DIR / f"{args.out}_written.json"
    path.write_text(json.dumps([asdict(w) for w in written], indent=1, ensure_ascii=False))
    settings = {k: str(v) for k, v in vars(args).items()}
    write_results(args.out, results | {"weights": weights}, settings)


def _recorded() -> list[fit.Written]:
    """The list the job's written questions go to as it writes them (the job keeps only the
    weights)."""
    out: list[fit.Written] = []
    written = fit.Mailbox.written

    def recording(self, *args, **kwargs):
        out.extend(result := written(self, *args, **kwargs))
        return result

    fit.Mailbox.written = recording
    return out


if __name__ == "__main__":
    main()
