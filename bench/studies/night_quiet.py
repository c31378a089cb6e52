"""A one-night curve's ratios on the questions whose baseline was asked on a quiet machine
and the time to first token of the questions whose prompt chunks all came from the tree
(bench/night.py --one-night asks naive and reactive once, beside the shipped design at the
first point; if other work shared the cores then, those questions' baseline is slow and every
later point's ratio looks better than it is). --exclude names the questions (1-based, in the
order asked) to leave out, read off the run's log: the gaps between questions at the first
point that were far above the rest.

    python bench/studies/night_quiet.py --points bench/results/night_1_5b_e2e \\
        --minutes 0,10,30,60 --exclude 1,2,9-13,35 [--baseline E2E_JSON] [--out night_1_5b_quiet]

--baseline: the file naive and reactive were asked in, when the night read them from an earlier
run (bench/night.py --one-night --baseline); otherwise the first point's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common

from _common import print_table, write_results  # noqa: E402


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def numbers(text: str) -> set[int]:
    out: set[int] = set()
    for part in filter(None, text.split(",")):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", required=True, help="path prefix of the e2e-M JSONs")
    parser.add_argument("--minutes", default="0,10,30,60")
    parser.add_argument("--exclude", default="", help="questions to leave out: 1,2,9-13")
    parser.add_argument("--baseline", type=Path, help="where naive and reactive were asked")
    parser.add_argument("--out", default="night_quiet")
    args = parser.parse_args()
    minutes = [m for m in args.minutes.split(",") if m]
    first = json.loads((args.baseline or Path(f"{args.points}{minutes[0]}.json")).read_text())
    first = first["runs"]
    left_out = numbers(args.exclude)
    keep = [k for k in range(len(first["naive"])) if k + 1 not in left_out]

    def mean(rows: list[dict]) -> float:
        return statistics.fmean(rows[k]["total"] for k in keep)

    naive, reactive = mean(first["naive"]), mean(first["ragcache"])
    points = []
    for m in minutes:
        rows = json.loads(Path(f"{args.points}{m}.json").read_text())["runs"]["full-any-ev"]
        full = mean(rows)
        ratios = {"full_vs_naive": full / naive, "full_vs_reactive": full / reactive}
        # every question whose prompt chunks all came from the tree (all 41, not only `keep`)
        covered = [r for r in rows if r["kv_chunks"] and r["kv_chunks_reused"] == r["kv_chunks"]]
        ratios |= {"covered": len(covered),
                   "covered_ttft_p50_s": median([r["ttft"] for r in covered]),
                   "covered_verdict_p50_s": median([r["verdict"] for r in covered])}  # fmt: skip
        points.append({"minutes": float(m), "questions": len(keep), "full_mean_s": full,
                       "naive_mean_s": naive, "reactive_mean_s": reactive} | ratios)  # fmt: skip
    print_table(
        f"the curve on the {len(keep)} questions with a quiet baseline",
        ["minutes", "full s", "naive s", "reactive s", "full/naive", "full/reactive", "covered",
         "TTFT p50 covered", "verdict p50 covered"],
        [[p["minutes"], p["full_mean_s"], p["naive_mean_s"], p["reactive_mean_s"],
          p["full_vs_naive"], p["full_vs_reactive"], p["covered"], p["covered_ttft_p50_s"],
          p["covered_verdict_p50_s"]] for p in points],
    )  # fmt: skip
    write_results(args.out, {"points": points}, {k: str(v) for k, v in vars(args).items()})


if __name__ == "__main__":
    main()
