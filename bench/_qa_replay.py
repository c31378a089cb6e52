"""The reader's "same question" designs of bench/qa_hits.py replayed over its kept rows (no model
runs): the bar fitted on half the demo pairs (alternate rows) and reported on the other half and
on every other set; the looser candidate-line design; and the evidence check alone."""

from __future__ import annotations


def reader_design(results: dict) -> None:
    """The reader design, replayed: its bar fitted on half the demo pairs (alternate rows),
    reported on the other half and on every other set."""
    demo = results.get("demo", {}).get("rows", [])
    bar = fit_same_bar(demo[0::2]) if demo else 0.0
    for name, r in results.items():
        rows = r["rows"][1::2] if name == "demo" else r["rows"]
        r["designs"]["reader"] = row_rates(replayed(rows, bar)) | {
            "same_bar": bar,
            "reported_on": "half b" if name == "demo" else "all",
        }
        if any("kind_ok" in x for x in rows):
            looser, places = fit_candidates(demo[0::2]) if demo else (0.0, 3)
            r["designs"]["reader, candidate lines"] = row_rates(
                candidate_design(rows, looser, places)
            ) | {"same_bar": looser, "places": places,
                 "reported_on": "half b" if name == "demo" else "all"}  # fmt: skip
        r["designs"]["evidence, no reader"] = row_rates(no_reader(rows)) | {
            "reported_on": "half b" if name == "demo" else "all"
        }


def no_reader(rows: list[dict]) -> list[dict]:
    """The rows as the app serves them without a reader: every cut of the evidence check
    passed, and the question guard's word check where it is not the same question again
    (answer/qa_verify.py)."""
    from assistant.answer.qa_verify import unjudged_mismatch
    from cache.verify import Guard

    guard = Guard()
    return [{**r, "served": bool(r.get("today_served"))
             and unjudged_mismatch(guard, r["asked"], r["stored"]) is None}
            for r in rows]  # fmt: skip


def replayed(rows: list[dict], bar: float) -> list[dict]:
    """The rows with `served` as the reader design serves them at `bar`: every cut of the
    evidence check passed (as it serves without a reader) and the reader's margin at or above
    the bar (a repeat needs no reader)."""
    out = []
    for r in rows:
        margin = r.get("same_margin")
        passed = bool(r["today_served"]) if "today_served" in r else r["reason"].startswith("ok")
        out.append({**r, "served": passed and (margin is None or margin >= bar)})
    return out


def candidate_design(rows: list[dict], bar: float, places: int) -> list[dict]:
    """The rows as a looser check serves them: the stored answer's line is among the asked
    question's `places` best scored lines (not necessarily the best), the questions ask for the
    same kind of answer and name the same things (the slots), and the reader judges them the
    same at or above `bar`."""
    out = []
    for r in rows:
        place, margin = r.get("stored_place", -1), r.get("same_margin")
        passed = 0 <= place < places and r.get("kind_ok") and not r.get("slots")
        passed = passed and r.get("band") != "none" and margin is not None and margin >= bar
        out.append({**r, "served": bool(passed)})
    return out


def fit_candidates(rows: list[dict], most_false: float = 0.01) -> tuple[float, int]:
    """The candidate design's (bar, places) on the fit rows, as fit_same_bar chooses."""
    best = None
    for bar in [x / 4 for x in range(-8, 17)]:
        for places in (1, 2, 3, 5, 8):
            rates = row_rates(candidate_design(rows, bar, places))
            if (rates["near_miss_false_rate"] or 0) > most_false:
                continue
            key = (rates["right_hits"], bar, -places)
            best = key if best is None or key > best else best
    return (best[1], -best[2]) if best else (6.0, 1)


def row_rates(rows: list[dict]) -> dict:
    para = [r for r in rows if r["paraphrase"]]
    near = [r for r in rows if not r["paraphrase"]]
    right = [r for r in para if r["stored_right"]]
    served_right = sum(r["served"] for r in right)
    return {
        "paraphrases": len(para), "paraphrase_hits": sum(r["served"] for r in para),
        "stored_right": len(right), "right_hits": served_right,
        "right_hit_rate": served_right / len(right) if right else None,
        "wrong_served": sum(r["served"] and r["stored_right"] is False for r in para),
        "near_misses": len(near), "near_miss_false_hits": sum(r["served"] for r in near),
        "near_miss_false_rate": sum(r["served"] for r in near) / len(near) if near else None,
    }  # fmt: skip


def fit_same_bar(rows: list[dict], most_false: float = 0.01) -> float:
    """The reader's "same question" bar on the fit rows: the most right paraphrase hits with
    near-miss false hits at most `most_false`; ties to the higher bar."""
    best = None
    for bar in [x / 4 for x in range(-24, 25)]:
        rates = row_rates(replayed(rows, bar))
        if (rates["near_miss_false_rate"] or 0) > most_false:
            continue
        key = (rates["right_hits"], bar)
        best = key if best is None or key > best else best
    return best[1] if best else 6.0
