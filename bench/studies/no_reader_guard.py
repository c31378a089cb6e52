"""The QA bank without a reader (issue 46's fallback: [models] reader = "none", a reader that
fails to load, or too little free memory): the evidence check alone, as shipped, against the
evidence check with the question guard's word check added (cache/verify.py Guard.check, words
"match"), replayed over bench/qa_hits.py's kept rows (no model runs): paraphrase hits, right
hits, wrong answers served and near-miss false hits per set. An audit found near misses served
without a reader on the same quoted line ("…the Pi-hole…" → "…the router…").

    python bench/studies/no_reader_guard.py [--rows bench/results/qa_hits_reader_final.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import RESULTS_DIR, print_table, write_results  # noqa: E402
from _qa_replay import no_reader, row_rates  # noqa: E402


def designs(rows: list[dict]) -> dict[str, dict]:
    shipped = [{**r, "served": bool(r.get("today_served"))} for r in rows]
    guarded = no_reader(rows)  # what the app now does without a reader
    return {
        "evidence, no reader (shipped)": row_rates(shipped),
        "evidence + guard words, no reader": row_rates(guarded),
        "served now, not with the guard": [
            {
                "stored": r["stored"],
                "asked": r["asked"],
                "paraphrase": r["paraphrase"],
                "stored_right": r["stored_right"],
            }
            for r, g in zip(shipped, guarded, strict=True)
            if r["served"] and not g["served"]
        ],  # fmt: skip
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=Path, default=RESULTS_DIR / "qa_hits_reader_final.json")
    parser.add_argument("--out", default="no_reader_guard")
    args = parser.parse_args()
    kept = json.loads(args.rows.read_text())
    out = {name: designs(s["rows"]) for name, s in kept["sets"].items()}
    table = []
    for name, got in out.items():
        for design in ("evidence, no reader (shipped)", "evidence + guard words, no reader"):
            r = got[design]
            keys = ("paraphrase_hits", "right_hits", "stored_right", "wrong_served",
                    "near_miss_false_hits", "near_misses")  # fmt: skip
            table.append([name, design, *(r[k] for k in keys)])
    print_table(
        "QA bank without a reader: the word guard added (replayed over kept rows)",
        [
            "set",
            "design",
            "paraphrase hits",
            "right hits",
            "of right",
            "wrong served",
            "near-miss false hits",
            "near misses",
        ],  # fmt: skip
        table,
    )
    write_results(args.out, {"rows_from": str(args.rows), "sets": out}, vars(args))


if __name__ == "__main__":
    main()
