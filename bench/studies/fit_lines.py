"""Fit the line scorer's weights and bars on questions the model writes about lines of a mailbox
(assistant/answer/fit.py), report them on held-out written questions, and ablate each feature.

No evaluation set is read: the questions are written by the model from sampled lines. The
shipped DEFAULT_WEIGHTS (assistant/answer/evidence.py) are this bench's `weights` on the demo
mailbox; a home refits on its own mail at night.

    python bench/studies/fit_lines.py [--home DIR] [--lines 300] [--out line_weights]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from dataclasses import asdict, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

import numpy as np  # noqa: E402
from _common import RESULTS_DIR, demo_context, log, print_table, write_results  # noqa: E402

from assistant.answer import fit  # noqa: E402
from assistant.answer.evidence import (  # noqa: E402
    DEFAULT_WEIGHTS,
    FEATURES,
    LineFinder,
    mail_key,
)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, help="an imported home to copy (default: the demo)")
    parser.add_argument("--lines", type=int, default=300, help="lines to write questions from")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default="line_weights")
    parser.add_argument(
        "--written", type=Path, help="written questions to reuse (default: write them; they are "
        "saved beside the results as NAME_written.json)",
    )  # fmt: skip
    parser.add_argument(
        "--reselect", action="store_true", help="select the written questions' chunks again "
        "on --home (their chunk ids are those of the home they were written on)",
    )  # fmt: skip
    return parser.parse_args()


def probes_for(ctx, args: argparse.Namespace) -> list[fit.Probe]:
    finder = LineFinder(ctx.embedder)
    if args.written:
        rows = json.loads(args.written.read_text())
        written = [fit.Written(**row) for row in rows]
        if args.reselect:
            mailbox = fit.Mailbox(ctx.store, ctx.prompt_cache(), ctx.selection, finder)
            written = reselected(written, mailbox)
            log(f"{len(written)} of {len(rows)} written questions bring their line's mail here")
    else:
        mailbox = fit.Mailbox(ctx.store, ctx.prompt_cache(), ctx.selection, finder)
        log(f"writing questions about {args.lines} lines")
        written = mailbox.written(args.lines, random.Random(args.seed), background=False)
        path = RESULTS_DIR / f"{args.out}_written.json"
        path.write_text(json.dumps([asdict(w) for w in written], indent=1, ensure_ascii=False))
    return fit.featurize(written, finder, ctx.store)


def reselected(written: list[fit.Written], mailbox: fit.Mailbox) -> list[fit.Written]:
    """The written questions as this home answers them: each question's chunks selected again,
    its source mail the one whose lines hold the written line (a question whose line no chunk
    holds is left out), and the chunks without it widened again."""
    out = []
    for w in written:
        vector = mailbox.finder.embedder.embed_batch([w.question])[0]
        records = mailbox.chosen(w.question, vector)
        source = next((r for r in records if fit.holds_line(r, w.line)), None)
        if source is None:
            continue
        key = mail_key(source)
        others = [r for r in mailbox.widen(w.question, vector) if mail_key(r) != key]
        chunks = [r.chunk_id for r in records]
        out.append(
            fit.Written(w.question, w.line, chunks, [r.chunk_id for r in others][: len(chunks)])
        )
    return out


def split(probes: list[fit.Probe], seed: int) -> tuple[list[fit.Probe], list[fit.Probe]]:
    order = random.Random(seed).sample(range(len(probes)), len(probes))
    cut = 2 * len(probes) // 3
    return [probes[i] for i in order[:cut]], [probes[i] for i in order[cut:]]


def without(probes: list[fit.Probe], feature: str) -> list[fit.Probe]:
    """The probes with one feature's column zeroed (fitted without it)."""
    col = FEATURES.index(feature)

    def zeroed(x: np.ndarray | None) -> np.ndarray | None:
        if x is None:
            return None
        x = x.copy()
        x[:, col] = 0.0
        return x

    return [replace(p, x=zeroed(p.x), x_without=zeroed(p.x_without)) for p in probes]


def main() -> None:
    args = parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ctx = demo_context(Path(tmp), args.home)
        probes = probes_for(ctx, args)
    train, test = split(probes, args.seed)
    log(f"{len(probes)} probes: {len(train)} to fit, {len(test)} to test")
    rows = []
    for name in ("all", *(f"-{f}" for f in FEATURES)):
        tr = train if name == "all" else without(train, name[1:])
        te = test if name == "all" else without(test, name[1:])
        weights = fit.fit(tr)
        rows.append({"design": name, **_flat(fit.report(weights, te))})
    shipped = fit.fit(probes)
    columns = ["design", "questions", "source_line_first", "source_line_first_hard",
               "not_found_with_source",
               "not_found_without_source", "right_marked"]  # fmt: skip
    print_table(
        "line scorer on held-out written questions (each feature off in turn)",
        columns,
        [[row[c] for c in columns] for row in rows],
    )
    data = {
        "probes": len(probes),
        "ablation": rows,
        "weights": {
            "coef": list(shipped.coef),
            "bias": shipped.bias,
            "answer": shipped.answer,
            "weak": shipped.weak,
        },  # fmt: skip
        "features": list(FEATURES),
        "on_all_probes": fit.report(shipped, probes),
        # what a night on this mailbox would do (fit.trial): fits on part of the probes
        # against the shipped weights on the rest; adopted only when better beyond chance
        "night_guard": guard(probes, args.seed),
        "examples": [p.question for p in probes[:20]],
    }
    log(f"wrote {write_results(args.out, data, vars(args))}")


def guard(probes: list[fit.Probe], seed: int) -> dict:
    """The night's check of its refit (fit.trial) on these probes against the shipped weights:
    the fits' wins and losses on the held-out folds, the sign test and the verdict."""
    result = fit.trial(probes, DEFAULT_WEIGHTS, random.Random(seed))
    log(f"night guard: {result}: {'adopted' if result.better else 'kept the shipped weights'}")
    return asdict(result) | {"adopted": result.better}


def _flat(report: dict) -> dict:
    return {k: v for k, v in report.items() if k != "features"}


if __name__ == "__main__":
    main()
