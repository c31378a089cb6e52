"""What a user feels on a large home: each command's wall time and peak memory, this checkout
beside another (an earlier commit's worktree), by turns.

    python bench/commands_scale.py [--base PATH] [--runs 5] [--copies 48] [--only NAME,...]
                                   [--out commands_scale]

The home is bench/big_home.py's (the dev mailbox copied to ~100k mails, built once), copied once
per side (each side's migrations run on its own copy). Each command runs in a fresh process
(`python -m assistant.cli ...` from the side's checkout, so its code runs), the sides in turn
(A B, B A, ...) after one warm-up run each (an index built on first use is built there); wall
seconds and the peak resident memory of the process (getrusage of the child, as /usr/bin/time
-v reports it). `ask-quote` runs the answer path up to the quote in-process (retrieval, the
mail's lines; the reader off, no model loads); `tui-open` opens the app (App.run_test) until its
header shows the bank's counts; `import-10` imports 10 new mails (a new mbox each run);
`search-after-import` imports 10 more and then searches (the first search after an import
brings the indexes up to date). The figures are medians over the runs; the ratio this ÷ base
is taken run by run (median).
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
import time
from pathlib import Path
from typing import Any

from _common import CACHE_DIR, REPO, default_eval_dir, log, print_table, write_results
from big_home import build, copied, dev_mbox

TODAY = "2001-11-20"  # the dev mailbox's last days: relative dates read the same on every run
QUESTION = "What did Steve Kean say about the California power crisis?"
COMMANDS: dict[str, list[str]] = {
    "help": ["--help"],
    "search": ["search", "gas pipeline capacity expansion"],
    "search-terms": ["search", "from:kean date:2001-05 california"],
    "search-person": ["search", "--today", TODAY, QUESTION],
    "people": ["people", "Steve Kean"],
    "thread-number": ["thread", "#50000"],
    "thread-unknown": ["thread", "no-such-thread-id"],
    "show": ["show", "#50000"],
    "stats": ["stats"],
    "ask-quote": [],  # in-process, below
    "tui-open": [],
    "import-10": [],
    "search-after-import": [],  # 10 new mails imported, then `search` (the dense index follows)
}
ASK = f"""
import json, sys, time
from assistant import events as e
from assistant.config import load_settings
from assistant.home import open_home
from assistant.services import open_services
home = open_home(sys.argv[1])
settings = load_settings(home.config_file)
settings.models.reader = "none"
settings.mail.today = "{TODAY}"
t0 = time.perf_counter()
ctx = open_services(home, settings)
for event in ctx.answerer().answer({QUESTION!r}):
    if isinstance(event, e.QuoteFound):
        break
seconds = time.perf_counter() - t0
print(json.dumps({{"quote_s": seconds, "subject": event.mail.get("subject", "")}}))
"""
TUI = """
import asyncio, json, sys, time
t0 = time.perf_counter()
from assistant.services import open_services
from assistant.tui.app import make_app
async def main():
    app = make_app(open_services(sys.argv[1]))
    async with app.run_test(size=(120, 40)) as pilot:
        mounted = time.perf_counter() - t0
        while not app.sub_title:
            await pilot.pause(0.01)
        counts = time.perf_counter() - t0
    print(json.dumps({"mounted_s": mounted, "counts_s": counts}))
asyncio.run(main())
"""


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, help="another checkout (a worktree) to run beside")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--copies", type=int, default=48)
    parser.add_argument("--only", default="", help="comma-separated command names")
    parser.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    parser.add_argument("--out", default="commands_scale")
    return parser.parse_args()


def home_copy(source: Path, side: str) -> Path:
    """A copy of the built home for one side (kept between runs of this bench)."""
    out = CACHE_DIR / f"{source.name}-{side}"
    if not (out / "COPIED").exists():
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(source, out)
        (out / "COPIED").write_text("")
    return out


def new_mails(eval_dir: Path, tag: str, n: int = 10) -> Path:
    """An mbox of the dev mailbox's first `n` mails with Message-IDs no import has seen."""
    raw = dev_mbox(eval_dir).read_bytes()
    starts = [
        i for i in range(len(raw)) if raw.startswith(b"From ", i) and (i == 0 or raw[i - 1] == 10)
    ][: n + 1]
    out = CACHE_DIR / "new-mails" / f"{tag}.mbox"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(copied(raw[: starts[n]] if len(starts) > n else raw, tag))
    return out


def argv(name: str, home: Path, eval_dir: Path, run: str) -> list[str]:
    py = [sys.executable]
    if name == "ask-quote":
        return [*py, "-c", ASK, str(home)]
    if name == "tui-open":
        return [*py, "-c", TUI, str(home)]
    if name == "search-after-import":
        mbox, cli = new_mails(eval_dir, run), f"{sys.executable} -m assistant.cli"
        query = COMMANDS["search"][1]
        line = f"{cli} import {mbox} --home {home} && {cli} search '{query}' --home {home}"
        return ["sh", "-c", line]
    if name == "import-10":
        return [
            *py,
            "-m",
            "assistant.cli",
            "import",
            str(new_mails(eval_dir, run)),
            "--home",
            str(home),
        ]
    cmd = COMMANDS[name]
    if name == "help":
        return [*py, "-m", "assistant.cli", *cmd]
    return [*py, "-m", "assistant.cli", cmd[0], "--home", str(home), *cmd[1:]]


def timed(args: list[str], cwd: Path) -> dict[str, Any]:
    """Wall seconds and peak RSS (MiB) of one fresh process, and what it printed last. Run in
    a process of its own (run_once): RUSAGE_CHILDREN's ru_maxrss is the largest child's."""
    import resource

    t0 = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, capture_output=True)
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if done.returncode:
        log(f"exit {done.returncode}: {' '.join(args[:4])}…\n{done.stderr.decode()[-800:]}")
    tail = done.stdout.decode(errors="replace").strip().splitlines()[-1:] or [""]
    return {"wall_s": wall, "peak_mib": peak, "rc": done.returncode, "last": tail[0][:200]}


def run_once(args: list[str], cwd: Path) -> dict[str, Any]:
    """`timed` in a fresh Python of its own, so the children's peak is this command's alone."""
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); from commands_scale import timed; "
        "print(json.dumps(timed(json.loads(sys.argv[2]), sys.argv[3])))"
    )
    bench = str(Path(__file__).resolve().parent)
    done = subprocess.run(
        [sys.executable, "-c", code, bench, json.dumps(args), str(cwd)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    args = parse_args()
    source = build(args.copies, args.eval_dir)
    sides = {"this": REPO}
    if args.base:
        sides["base"] = args.base.resolve()
    homes = {side: home_copy(source, side) for side in sides}
    names = [n for n in COMMANDS if not args.only or n in args.only.split(",")]
    rows: dict[str, dict[str, list[dict[str, Any]]]] = {n: {s: [] for s in sides} for n in names}
    for name in names:
        for side, checkout in sides.items():  # warm-up: indexes built on first use
            run_once(argv(name, homes[side], args.eval_dir, f"warm-{side}"), checkout)
        for turn in range(args.runs):
            order = list(sides) if turn % 2 == 0 else list(reversed(sides))
            for side in order:
                tag = f"{side}-{turn}-{time.time_ns()}"
                got = run_once(argv(name, homes[side], args.eval_dir, tag), sides[side])
                rows[name][side].append(got)
        log(
            f"{name}: "
            + ", ".join(
                f"{s} {statistics.median(r['wall_s'] for r in v):.2f} s"
                for s, v in rows[name].items()
            )
        )
    summary = summarize(rows)
    print_table(
        f"Commands on a {args.copies}-copy home of the dev mailbox (wall s, peak MiB; median)",
        [
            "command",
            *[f"{s} s" for s in sides],
            *[f"{s} MiB" for s in sides],
            *(["this ÷ base"] if "base" in sides else []),
        ],
        [
            [
                n,
                *[s[f"{side}_s"] for side in sides],
                *[s[f"{side}_mib"] for side in sides],
                *([s["ratio"]] if "base" in sides else []),
            ]
            for n, s in summary.items()
        ],
    )
    write_results(
        args.out,
        {"home": str(source), "copies": args.copies, "sides": {k: str(v) for k, v in sides.items()},
         "runs": args.runs, "loadavg": os.getloadavg(), "summary": summary, "rows": rows},
        vars(args),
    )  # fmt: skip


def summarize(rows: dict[str, dict[str, list[dict[str, Any]]]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name, by_side in rows.items():
        item: dict[str, Any] = {}
        for side, runs in by_side.items():
            item[f"{side}_s"] = round(statistics.median(r["wall_s"] for r in runs), 3)
            item[f"{side}_mib"] = round(statistics.median(r["peak_mib"] for r in runs), 1)
        if "base" in by_side:
            pairs = zip(by_side["this"], by_side["base"], strict=True)
            item["ratio"] = round(statistics.median(a["wall_s"] / b["wall_s"] for a, b in pairs), 3)
        out[name] = item
    return out


if __name__ == "__main__":
    main()
