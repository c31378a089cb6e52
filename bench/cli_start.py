"""A one-shot `assistant ask` served from the QA bank, from the shell: this checkout beside an
earlier commit, run by turns on one copy of a home (issue 32: a one-shot hit ≤ 1 s wall).

The copy's QA bank holds one stored answer (a real-mail pair's stored question, answered by the
app's quote without the model); each run asks the pair's paraphrase in a fresh process, which the
bank serves. Also timed: importing assistant.cli.commands (assistant.commands in a commit before
issue 48 moved it), the imports every command pays. The earlier commit runs from a git worktree
(`python -m` takes the package from the working directory). Wall seconds per run; p50 and the
ratio with a 95% bootstrap interval over the paired runs.

    python bench/cli_start.py [--home /work/eval/home] [--base 0898b4c] [--runs 9]
                              [--pairs data/qa/skilling_pairs.jsonl] [--out cli_start]

Without --home the real mailbox in ../shared/eval/mail/ is imported first (minutes).
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"

# ruff: noqa: E402
import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import (
    QA_DIR,
    REPO,
    cli_import,
    default_eval_dir,
    log,
    percentile,
    print_table,
    write_results,
)
from quality import ratio_interval

from assistant.services import open_services

REMEMBERED = "Remembered answer"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, help="an imported real-mail home to copy")
    parser.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    parser.add_argument("--base", default="0898b4c", help="the earlier commit")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--pairs", type=Path, default=QA_DIR / "skilling_pairs.jsonl")
    parser.add_argument("--out", default="cli_start")
    return parser.parse_args()


def first_paraphrase(path: Path) -> tuple[str, str]:
    for line in path.read_text(encoding="utf-8").splitlines():
        pair = json.loads(line) if line.strip() else {}
        if pair.get("relation") == "paraphrase":
            return pair["stored"], pair["asked"]
    raise SystemExit(f"{path}: no paraphrase pair")


def store(home: Path, question: str) -> None:
    """The stored answer, as the QA-hits bench stores one without the model."""
    ctx = open_services(home)
    answerer = ctx.answerer()
    vector = ctx.embedder.embed_batch([question])[0]
    hits, found = answerer.quote(question, vector)
    if found.not_found:
        raise SystemExit(f"{question!r}: not found in {home}; pick another pair")
    ctx.memory.keep(question, vector, "", hits, "bench", found)


# the commands module of either layout, found by its folder so that neither pays the other's import
IMPORT_COMMANDS = (
    "import importlib, os, assistant;"
    "new = os.path.isdir(os.path.join(os.path.dirname(assistant.__file__), 'cli'));"
    "importlib.import_module('assistant.cli.commands' if new else 'assistant.commands')"
)


def timed(argv: list[str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, done.stdout + done.stderr  # the served note: stderr


def main() -> None:
    args = parse_args()
    stored, asked = first_paraphrase(args.pairs)
    work = Path(tempfile.mkdtemp(prefix="cli-start-"))
    base = work / f"code-{args.base}"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(base), args.base],
                   check=True, capture_output=True)  # fmt: skip
    try:
        home = work / "home"
        if args.home is None:
            cli_import(home, "real", work, args.eval_dir)
        else:
            shutil.copytree(args.home, home, ignore=shutil.ignore_patterns("cache", "run"))
        store(home, stored)
        codes = {"base": base, "this": REPO}
        ask = [sys.executable, "-m", "assistant.cli", "--home", str(home), "ask", asked]
        imports = [sys.executable, "-c", IMPORT_COMMANDS]
        walls: dict[str, dict[str, list[float]]] = {k: {"ask": [], "imports": []} for k in codes}
        for run in range(args.runs + 1):  # the first round warms the page cache, not kept
            for name, code in codes.items() if run % 2 else reversed(codes.items()):
                seconds, out = timed(ask, code)
                if REMEMBERED not in out:
                    raise SystemExit(f"{name}: the ask was not served from the bank:\n{out}")
                import_s, _ = timed(imports, code)
                if run:
                    walls[name]["ask"].append(seconds)
                    walls[name]["imports"].append(import_s)
            log(f"run {run}/{args.runs}")
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(base)],
                       capture_output=True)  # fmt: skip
        shutil.rmtree(work, ignore_errors=True)
    summary = {}
    for what in ("ask", "imports"):
        new, old = walls["this"][what], walls["base"][what]
        low, high = ratio_interval(np.column_stack([new, old]), draws=2000, stat=np.median)
        summary[what] = {
            "this_p50_s": percentile(new, 50), "base_p50_s": percentile(old, 50),
            "ratio_p50": percentile(new, 50) / percentile(old, 50), "ratio_ci95": [low, high],
        }  # fmt: skip
    print_table(
        f"one-shot `ask` served from the QA bank, {args.runs} runs by turns: this checkout vs "
        f"{args.base}",
        ["", "this p50 s", "base p50 s", "ratio (95%)"],
        [[what, f"{s['this_p50_s']:.3f}", f"{s['base_p50_s']:.3f}",
          f"{s['ratio_p50']:.2f} ({s['ratio_ci95'][0]:.2f}-{s['ratio_ci95'][1]:.2f})"]
         for what, s in summary.items()],
    )  # fmt: skip
    data = {"stored": stored, "asked": asked, "summary": summary, "walls": walls}
    log(f"wrote {write_results(args.out, data, vars(args))}")


if __name__ == "__main__":
    main()
