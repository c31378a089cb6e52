"""The night's refit check (assistant/answer/fit.py `trial`) replayed on the questions a night
wrote (bench/studies/night_refit.py's NAME_written.json), against the shipped weights: how often
the check of stop 55 (fits on 4 of 5 folds, each question scored once by the fit that did not
see it, a one-sided sign test on its wins and losses, and no more "not found" on the written
questions) takes the refit, beside the check it replaced (one fit on 70% of the questions,
taken when it put more source lines first on the other 30%), over many shuffles.

    python bench/studies/refit_trial.py --set NAME=HOME:WRITTEN [--set …] [--shuffles 50]

HOME: the home the questions were written on (night_refit's --keep: its chunk ids).
Writes bench/results/refit_trial.json.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

from _common import log, print_table, write_results  # noqa: E402

from assistant.answer import fit  # noqa: E402
from assistant.answer.evidence import DEFAULT_WEIGHTS, LineFinder, LineWeights  # noqa: E402
from assistant.services import open_services  # noqa: E402

HEADS = ["set", "probes", "taken: 70/30", "taken: folds", "wins", "losses", "p", "nf fit",
         "nf shipped"]  # fmt: skip


def single_split(probes: list[fit.Probe], current: LineWeights, rng: random.Random) -> bool:
    """The check before stop 55 (fit.trial at 6797c6c): a fit on 70% of the probes taken when
    it put more source lines first than `current` on the other 30% (a tie kept `current`)."""
    shuffled = list(probes)
    rng.shuffle(shuffled)
    cut = int(len(shuffled) * 0.7)
    fitted, rest = fit.fit(shuffled[:cut]), shuffled[cut:]
    ours, theirs = (fit.report(w, rest)["source_line_first"] for w in (fitted, current))
    return ours > theirs


def replay(probes: list[fit.Probe], shuffles: int) -> dict:
    folds = [fit.trial(probes, DEFAULT_WEIGHTS, random.Random(s)) for s in range(shuffles)]
    single = [single_split(probes, DEFAULT_WEIGHTS, random.Random(s)) for s in range(shuffles)]
    return {
        "probes": len(probes),
        "taken_single_split": sum(single) / shuffles,
        "taken_folds": sum(t.better for t in folds) / shuffles,
        "wins_median": statistics.median(t.wins for t in folds),
        "losses_median": statistics.median(t.losses for t in folds),
        "p_median": statistics.median(t.p for t in folds),
        "not_found_fit_median": statistics.median(t.not_found_fit for t in folds),
        "not_found_shipped_median": statistics.median(t.not_found_current for t in folds),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", required=True, help="NAME=HOME:WRITTEN")
    parser.add_argument("--shuffles", type=int, default=50)
    parser.add_argument("--out", default="refit_trial")
    args = parser.parse_args()
    sets = {}
    for spec in args.set:
        name, rest = spec.split("=", 1)
        home, written_path = rest.split(":", 1)
        ctx = open_services(Path(home))
        rows = json.loads(Path(written_path).read_text(encoding="utf-8"))
        written = [fit.Written(**row) for row in rows]
        probes = fit.featurize(written, LineFinder(ctx.embedder), ctx.store)
        log(f"{name}: {len(probes)} probes of {len(written)} written questions")
        sets[name] = replay(probes, args.shuffles) | {"written": written_path}
    columns = ["probes", "taken_single_split", "taken_folds", "wins_median", "losses_median",
               "p_median", "not_found_fit_median", "not_found_shipped_median"]  # fmt: skip
    print_table(
        f"the refit's check against the shipped weights over {args.shuffles} shuffles (medians "
        "of the 5-fold check's wins, losses, p and questions called not found)",
        HEADS,
        [[name] + [r[c] for c in columns] for name, r in sets.items()],
    )
    write_results(args.out, {"sets": sets}, vars(args))


if __name__ == "__main__":
    main()
