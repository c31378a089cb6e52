"""How long the test suite takes, one process vs `make test`'s two xdist workers (issue 36: make
test no slower than before).

    python bench/test_time.py [--modes serial,xdist] [--out test_time]
    python bench/test_time.py --log serial=/tmp/serial.log --log xdist=/tmp/xdist.log

Each mode runs the whole suite (HF_HUB_OFFLINE=1) and keeps pytest's own summary line ("806
passed in 391.45s"); `--log MODE=PATH` reads that line from a run's saved output instead. Writes
bench/results/NAME.json.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, log, print_table, write_results  # noqa: E402

MODES = {"serial": [], "xdist": ["-n", "2", "--dist", "loadfile"]}
SUMMARY = re.compile(r"(?P<counts>\d+ passed[^\n]*?) in (?P<seconds>[\d.]+)s")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", default="serial,xdist")
    parser.add_argument("--log", action="append", default=[], help="MODE=PATH of a saved run")
    parser.add_argument("--out", default="test_time")
    return parser.parse_args()


def summary(text: str) -> dict:
    found = SUMMARY.findall(text)
    if not found:
        raise SystemExit("no pytest summary line ('N passed in S s') in the output")
    counts, seconds = found[-1]
    return {"summary": counts, "seconds": float(seconds)}


def run(mode: str) -> dict:
    log(f"running the suite: {mode}")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *MODES[mode]]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    return {**summary(done.stdout), "returncode": done.returncode}


def main() -> None:
    args = parse_args()
    results = {}
    for item in args.log:
        mode, path = item.split("=", 1)
        results[mode] = {**summary(Path(path).read_text()), "from_log": path}
    if not args.log:
        results = {mode: run(mode) for mode in args.modes.split(",")}
    base = results.get("serial", {}).get("seconds")
    rows = [[m, r["summary"], r["seconds"], r["seconds"] / base if base else None]
            for m, r in results.items()]  # fmt: skip
    print_table("the test suite's wall time", ["mode", "pytest", "seconds", "÷ serial"], rows)
    print(f"wrote {write_results(args.out, {'modes': results}, vars(args))}")


if __name__ == "__main__":
    main()
