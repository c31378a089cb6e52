"""Cold start of `assistant search` and `assistant ask` from the shell, per encoder backend.

    python bench/start.py [--home DIR] [--runs 3] [--backends auto,onnx-int8,onnx,torch]
                           [--out start]

Each command runs in a fresh process under /usr/bin/time: wall seconds, CPU seconds (user +
system: what the wall time would be on an idle machine, near enough) and peak resident memory;
for `ask`, the time to first token the answer reports. Then the app itself (bench/_chat.py: the
TUI headless, on a copy of the home with an empty cache) asked CHAT's questions one after another:
its resident memory after each answer and its peak, the user's wait for the first words. A demo
home is made under /tmp when --home is not given (with "-int8" appended for the int8 encoder, whose
vectors are its own). Writes bench/results/start.json (or --out).
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"

# ruff: noqa: E402
import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import REPO, log, print_table, write_results

QUERY = "when does the kitchen work start"
CHAT = (
    "When does the kitchen work start?",
    "What did Priya notice in the RC2 soak test?",
    "How much does the offsite venue in Utrecht cost per person?",
)
TIME = "/usr/bin/time"
FORMAT = "TIME %e %U %S %M"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=Path("/tmp/bench-start-home"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--backends", default="onnx-int8,onnx,torch")
    parser.add_argument("--out", default="start", help="results file name (no .json)")
    return parser.parse_args()


def cli(home: Path, backend: str, *args: str) -> tuple[dict[str, float], str]:
    return timed_run(backend, "-m", "assistant.cli", *args, "--home", str(home))


def timed_run(backend: str, *args: str) -> tuple[dict[str, float], str]:
    """`python ARGS` in a fresh process under /usr/bin/time, with `backend` as the encoder."""
    env = {**os.environ, "ASSISTANT_EMBEDDING_BACKEND": backend}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    cmd = [TIME, "-f", FORMAT, sys.executable, *args]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO)
    if out.returncode:
        raise SystemExit(f"{' '.join(args)} failed:\n{out.stderr[-2000:]}")
    line = next(ln for ln in reversed(out.stderr.splitlines()) if ln.startswith("TIME "))
    wall, user, system, rss_kb = map(float, line.split()[1:])
    return {"wall_s": wall, "cpu_s": user + system, "rss_mib": rss_kb / 1024}, out.stdout


def demo_home(home: Path, backend: str) -> Path:
    """A demo home embedded by `backend`'s encoder (torch and onnx share their vectors; "auto",
    the default, is made by `assistant demo` as a new user's home is)."""
    home = home.with_name(home.name + {"onnx-int8": "-int8", "auto": "-auto"}.get(backend, ""))
    if not (home / "knowledge.db").exists():
        log(f"making a demo home in {home}")
        cli(home, backend, "demo")
    return home


def ttft(stdout: str) -> float:
    for line in stdout.splitlines():
        event = json.loads(line)
        if event.get("event") == "AnswerDone":
            return float(event["timings"]["ttft"])
    raise SystemExit("ask printed no AnswerDone event")


def chat(home: Path, backend: str) -> dict[str, Any]:
    """The TUI asked CHAT's questions in turn, on a copy of `home` whose cache starts empty."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "home"
        shutil.copytree(home, copy, ignore=shutil.ignore_patterns("cache", "run", "logs"))
        time_, stdout = timed_run(backend, str(REPO / "bench" / "_chat.py"), str(copy), *CHAT)
    return {**json.loads(stdout.splitlines()[-1]), "process": time_}


def median_of(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def bench(home: Path, backend: str, n: int) -> dict[str, Any]:
    log(f"{backend}: search x{n}")
    search = [cli(home, backend, "search", QUERY)[0] for _ in range(n)]
    log(f"{backend}: ask")
    ask, stdout = cli(home, backend, "ask", "--no-cache", "--json", QUERY)
    log(f"{backend}: chat x{len(CHAT)}")
    return {
        "search": median_of(search),
        "search_runs": search,
        "ask": {**ask, "ttft_s": ttft(stdout)},
        "chat": chat(home, backend),
        "loadavg_1min": os.getloadavg()[0],
    }


def main() -> None:
    args = parse_args()
    backends = args.backends.split(",")
    runs = {b: bench(demo_home(args.home, b), b, args.runs) for b in backends}
    rows = [
        (
            b,
            r["search"]["wall_s"],
            r["search"]["cpu_s"],
            r["search"]["rss_mib"],
            r["ask"]["ttft_s"],
            r["ask"]["wall_s"],
            r["ask"]["rss_mib"],
            r["loadavg_1min"],
        )
        for b, r in runs.items()
    ]
    columns = ["encoder", "search wall s", "CPU s", "RSS MiB", "ask TTFT s", "wall s", "RSS MiB"]
    note = f"medians of {args.runs} fresh processes for search; one ask (--no-cache); demo home"
    print_table("Cold start", [*columns, "load"], rows, note)
    chats = [
        (
            b,
            r["chat"]["rss_open_mib"],
            *(t["rss_mib"] for t in r["chat"]["turns"]),
            r["chat"]["peak_mib"],
            max(t["first_words_s"] for t in r["chat"]["turns"]),
        )
        for b, r in runs.items()
    ]
    after = [f"RSS after answer {i + 1}" for i in range(len(CHAT))]
    note = "the TUI headless on a copy of the home, empty cache; MiB; first words: the longest wait"
    columns = ["encoder", "RSS open", *after, "peak", "first words s"]
    print_table("While chatting", columns, chats, note)
    print(f"wrote {write_results(args.out, runs, vars(args) | {'home': str(args.home)})}")


if __name__ == "__main__":
    main()
