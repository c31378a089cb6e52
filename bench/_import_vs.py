"""bench/import.py --against COMMIT: this checkout's import beside an earlier commit's, by turns.

Each turn runs bench/_import_worker.py once with each side's code, in fresh processes, the order
swapped every turn (A B, B A, …): the same mailbox read into a fresh home (parse, chunk, store:
mails/s and chunks/s of reading), then its first chunks embedded (chunks/s of embedding). The
earlier commit runs from a git worktree made here and removed after. Machines of one kind differ
by 2x in pace and a shared one drifts, so what counts is the ratio, taken turn by turn: this
side's rate ÷ the earlier one's (above 1: this checkout is faster). The figures are min, median
and max over the turns.
"""

from __future__ import annotations

import gzip
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import CACHE_DIR, REPO, log, print_table, write_results

WORKER = Path(__file__).resolve().parent / "_import_worker.py"
# (label, numerator, denominator) of each rate in a worker's report
RATES = (
    ("read: mails/s", "mails", "read_seconds"),
    ("read: chunks/s", "chunks", "read_seconds"),
    ("read: mails per CPU-s", "mails", "read_cpu_seconds"),
    ("embed: chunks/s", "embedded", "embed_seconds"),
    ("embed: chunks per CPU-s", "embedded", "embed_cpu_seconds"),
)


def dev_mailbox(eval_dir: Path, mails: int) -> Path:
    """The dev mailbox (<eval_dir>/mail/skilling-j.mbox.gz) unpacked once under the bench cache,
    cut to its first `mails` messages (0: all of them)."""
    source = eval_dir / "mail" / "skilling-j.mbox.gz"
    if not source.exists():
        raise SystemExit(f"{source} is missing: give --mbox")
    out = CACHE_DIR / f"skilling-j-{mails or 'all'}.mbox"
    if not out.exists():
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        with gzip.open(source) as src:
            raw = src.read()
        out.write_bytes(first_messages(raw, mails) if mails else raw)
    return out


def first_messages(raw: bytes, n: int) -> bytes:
    """The first `n` messages of an mbox (each starts with a 'From ' line)."""
    starts = [i + 1 for i in _find_all(raw, b"\nFrom ")]
    return raw[: starts[n - 1]] if len(starts) >= n else raw


def _find_all(raw: bytes, needle: bytes):
    at = raw.find(needle)
    while at >= 0:
        yield at
        at = raw.find(needle, at + 1)


def worker(code: Path, mbox: Path, embed_limit: int) -> dict[str, Any]:
    cmd = [sys.executable, str(WORKER), "--code", str(code), "--mbox", str(mbox)]
    out = subprocess.run([*cmd, "--embed-limit", str(embed_limit)], capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"{code}: the worker failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def by_turns(codes: dict[str, Path], mbox: Path, turns: int, embed_limit: int) -> dict[str, list]:
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in codes}
    for turn in range(turns):
        order = list(codes.items()) if turn % 2 == 0 else list(codes.items())[::-1]
        for name, code in order:
            runs[name].append(worker(code, mbox, embed_limit))
        this, base = runs["this"][-1], runs["base"][-1]
        log(f"turn {turn + 1}/{turns}: read {this['read_seconds']:.2f} s vs "
            f"{base['read_seconds']:.2f} s, embed {this['embed_seconds']:.1f} s vs "
            f"{base['embed_seconds']:.1f} s")  # fmt: skip
    return runs


def spread(values: list[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def summary(runs: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    out = {}
    for label, num, den in RATES:
        rates = {name: [r[num] / r[den] for r in side] for name, side in runs.items()}
        ratios = [a / b for a, b in zip(rates["this"], rates["base"], strict=True)]
        out[label] = {
            "this": spread(rates["this"]), "base": spread(rates["base"]), "ratio": spread(ratios),
        }  # fmt: skip
    return out


def worktree(commit: str, where: Path) -> tuple[Path, str]:
    """A detached worktree of `commit` under `where`, and the commit's short hash."""
    sha = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short=7", commit],
                         capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    tree = where / f"code-{sha}"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree), sha],
                   capture_output=True, check=True)  # fmt: skip
    return tree, sha


def against(commit: str, mbox: Path, turns: int, embed_limit: int, options: dict) -> Path:
    work = Path(tempfile.mkdtemp(prefix="import-vs-"))
    tree, sha = worktree(commit, work)
    try:
        log(f"{mbox.name}: this checkout and {sha} by turns, {turns} turns")
        runs = by_turns({"this": REPO, "base": tree}, mbox, turns, embed_limit)
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)],
                       capture_output=True)  # fmt: skip
        shutil.rmtree(work, ignore_errors=True)
    table = summary(runs)
    print_summary(table, runs, sha, mbox)
    first = runs["this"][0]
    data = {
        "against": sha,
        "mbox": mbox.name,
        "mails": first["mails"],
        "chunks": {name: side[0]["chunks"] for name, side in runs.items()},
        "embedded_per_run": first["embedded"],
        "turns": turns,
        "summary": table,
        "runs": runs,
    }
    return write_results(f"import_vs_{sha}", data, options)


def print_summary(table: dict, runs: dict, sha: str, mbox: Path) -> None:
    def cell(s: dict[str, float], digits: int) -> str:
        return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}-{s['max']:.{digits}f})"

    rows = [
        (label, cell(t["this"], 1), cell(t["base"], 1), cell(t["ratio"], 2))
        for label, t in table.items()
    ]
    loads = [r["loadavg_1min"] for side in runs.values() for r in side]
    first = runs["this"][0]
    note = (
        f"{mbox.name}: {first['mails']} mails, {first['chunks']} chunks read, the first "
        f"{first['embedded']} embedded; {len(runs['this'])} turns, each side in a fresh process, "
        f"the order swapped every turn; ratio = this ÷ {sha}, turn by turn; median (min-max); "
        f"1-min load {min(loads):.1f}-{max(loads):.1f}"
    )
    columns = ["", "this checkout", sha, "ratio"]
    print_table(f"Import by turns: this checkout vs {sha}", columns, rows, note, left=1)
