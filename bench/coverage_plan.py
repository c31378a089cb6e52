"""What the first N chunk nodes of a night cover, by plan: the coverage plan ("recent",
assistant/precompute/coverage.py) against newest-first by chunk id ("newest"; "access" is the
same with no asked questions). No model runs: the plan's order is read and measured.

    python bench/coverage_plan.py --home /tmp/night-home [--questions data/qa/skilling_recent.jsonl]

Measured per N: the share of the N chunks from the last six weeks of the mailbox, and the share
of the question set's source mails with a chunk among the N (the set is read only here, to
measure; the plan never sees it). Writes bench/results/coverage_plan.json.

With --flood COUNT (issue 47, bulk mail last): a copy of the home gets a write-in campaign of
COUNT nearly alike mails from COUNT senders over its newest week (bench/flood.py, imported by
the app's CLI; --flood-home reuses one made before), and the plan of each home is measured at
budgets of 100 · 250 · 500 · 1000 nodes and at what 30 minutes of night make at two measured
paces (night_stop48.json's projection, night_rate.json's default threads): the share of flood
chunks among the first N, and of the question set the share of source mails with a chunk among
them and the share of the prompts' chunks among them (the shipped selection reads the prompts,
no model, as bench/night_reach.py does): the mailbox's prompts under either plan (what the plan
changes), and each home's own (the flood changes what some questions retrieve, too). --today
pins the plan's now (`[mail] today`); the flood ends there. Writes bench/results/plan_flood.json.

    python bench/coverage_plan.py --home /tmp/flood/dev-home --flood 2256 \\
        [--flood-home /tmp/flood/flood-home]
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

# ruff: noqa: E402
import argparse
import json
import time
from datetime import datetime
from pathlib import Path

from _common import REPO, RESULTS_DIR, log, print_table, write_results
from flood import flooded_copy, is_flood

from assistant.knowledge.db import open_db
from assistant.knowledge.store import KnowledgeStore
from assistant.precompute import coverage, planner

NODES = (100, 400, 1000, 2000)
FLOOD_NODES = (100, 250, 500, 1000)
PACES = {  # a night bench's results → its nodes an hour
    "night_stop48": lambda d: d["projection"]["nodes_per_hour"],
    "night_rate": lambda d: next(c for c in d["cells"] if c["threads"] == "default")[
        "nodes_per_hour"
    ],
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--home", type=Path, required=True, help="a COPY of a home (migrated)")
    parser.add_argument("--questions", type=Path, default=Path("data/qa/skilling_recent.jsonl"))
    parser.add_argument("--flood", type=int, default=0, help="campaign mails to add (issue 47)")
    parser.add_argument("--flood-home", type=Path, help="the flooded copy: made once, reused")
    parser.add_argument("--out", default="", help="results name (coverage_plan, plan_flood)")
    parser.add_argument("--today", default="", help="[mail] today (ISO date): the plan's now")
    args = parser.parse_args()
    if args.flood:
        flood_main(args)
        return
    store = KnowledgeStore(open_db(args.home / "knowledge.db"))
    chunks_of = store.chunk_documents()
    plan, seconds = _plan(store, args.today)
    sources = _source_chunks(store, chunks_of, args.questions)
    orders = {"recent": plan.chunks, "newest": store.chunk_ids()[::-1]}
    rows, data = [], {"plan_seconds": seconds, "chunks": len(plan.chunks),
                      "recent_chunks": len(plan.recent_chunks), "by_nodes": []}  # fmt: skip
    for n in NODES:
        for name, order in orders.items():
            first = set(order[:n])
            recent = len(first & plan.recent_chunks) / n
            found = sum(bool(ids & first) for ids in sources) / max(len(sources), 1)
            rows.append([n, name, f"{recent:.2f}", f"{found:.2f}"])
            data["by_nodes"].append({"nodes": n, "plan": name, "recent_share": recent,
                                     "question_mails_covered": found})  # fmt: skip
    print_table(
        "First N chunk nodes by plan", ["nodes", "plan", "last 6 weeks", "asked mails"], rows,
        note=f"{len(sources)} question source mails; plan made in {seconds:.2f}s",
    )  # fmt: skip
    write_results(args.out or "coverage_plan", data, vars(args) | {"home": str(args.home)})


def _plan(store: KnowledgeStore, today: str) -> tuple[coverage.Plan, float]:
    """The plan as the night's Planner makes it (no asked questions, `today` or the newest
    mail's date), and the seconds it took. A commit before issue 47 has no chunk_texts: its
    plan reads no texts."""
    start = time.perf_counter()
    texts = getattr(planner, "chunk_texts", None)
    extra = (texts(store),) if texts else ()
    made = coverage.plan(store.mail_headers(), store.chunk_documents(), {}, today, *extra)
    return made, time.perf_counter() - start


def _source_chunks(store: KnowledgeStore, chunks_of: dict, path: Path) -> list[set[int]]:
    by_message = {h.message_id.strip("<>"): h.doc_id for h in store.mail_headers()}
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        source = (json.loads(line).get("source") or "").strip("<>")
        if source in by_message:
            out.append(set(chunks_of.get(by_message[source], [])))
    return out


# -- --flood ----------------------------------------------------------------------------------


def flood_main(args: argparse.Namespace) -> None:
    flooded = args.flood_home or args.home.parent / f"{args.home.name}-flood"
    if not (flooded / "knowledge.db").exists():
        log(f"importing a flood of {args.flood} mails into a copy of the home at {flooded}")
        flooded_copy(args.home, flooded, args.flood, _newest(args.home, args.today), REPO)
    budgets = {f"{n}": n for n in FLOOD_NODES} | _half_hours()
    prompts = {"mailbox": _prompt_chunks(args.home, args.questions),
               "mailbox + flood": _prompt_chunks(flooded, args.questions)}  # fmt: skip
    homes = {"mailbox": args.home, "mailbox + flood": flooded}
    measured = {
        name: _measure(home, args, budgets, prompts[name], prompts["mailbox"])
        for name, home in homes.items()
    }
    rows = [
        [name, budget, budgets[budget], *(m["by_budget"][budget][k] for k in _COLUMNS)]
        for name, m in measured.items()
        for budget in budgets
    ]
    print_table(
        f"The plan's first N chunks, {args.flood} flood mails beside the mailbox or not",
        ["home", "budget", "nodes", "flood share", "asked mails", "prompt chunks",
         "own prompts"], rows, left=2,
        note="asked mails: the questions' source mails with a chunk among the N; prompt chunks: "
             "the mailbox's prompts' chunks among the N (the plan alone); own prompts: the "
             "home's own prompts' (the flood changes some retrievals too). "
             + "; ".join(f"{n}: plan {m['plan_seconds']:.2f}s, {m['bulk_chunks']} bulk chunks,"
                         f" {m['copies']} copies planned last" for n, m in measured.items()),
    )  # fmt: skip
    data = {"flood_mails": args.flood, "budgets": budgets, "homes": measured,
            "acceptance": _acceptance(measured, budgets)}  # fmt: skip
    log(f"acceptance: {data['acceptance']}")
    written = write_results(args.out or "plan_flood", data, vars(args) | {"flood": str(flooded)})
    log(f"wrote {written}")


_COLUMNS = ("flood_share", "question_mails_covered", "prompt_chunks_covered", "own_prompts_covered")


def _newest(home: Path, today: str) -> datetime:
    store = KnowledgeStore(open_db(home / "knowledge.db"))
    return coverage.today_of(coverage.mails_of(store.mail_headers()), today)


def _half_hours() -> dict[str, int]:
    """What 30 minutes of night make at each measured pace."""
    out = {}
    for name, pace in PACES.items():
        per_hour = pace(json.loads((RESULTS_DIR / f"{name}.json").read_text()))
        out[f"30 min at {name} ({per_hour:,.0f}/h)"] = round(per_hour / 2)
    return out


def _measure(home: Path, args: argparse.Namespace, budgets: dict, own: list, fixed: list) -> dict:
    """The home's plan at each budget: flood share, source mails covered, and the chunks
    covered of the `fixed` prompts (the mailbox's) and of the home's `own`."""
    store = KnowledgeStore(open_db(home / "knowledge.db"))
    chunks_of = store.chunk_documents()
    plan, seconds = _plan(store, args.today)
    flood = {c for h in store.mail_headers() if is_flood(h.message_id)
             for c in chunks_of.get(h.doc_id, [])}  # fmt: skip
    sources = _source_chunks(store, chunks_of, args.questions)
    out = {"plan_seconds": seconds, "chunks": len(plan.chunks), "flood_chunks": len(flood),
           "bulk_chunks": getattr(plan, "bulk_chunks", 0), "by_budget": {},
           "copies": getattr(plan, "copies", 0),  # (none before issue 47)
           "prompt_chunks": sum(map(len, own)),
           "prompt_flood_chunks": sum(len(set(p) & flood) for p in own),
           "prompts": own}  # fmt: skip
    for name, n in budgets.items():
        first = set(plan.chunks[:n])
        out["by_budget"][name] = {
            "flood_share": len(first & flood) / n,
            "question_mails_covered": sum(bool(s & first) for s in sources) / len(sources),
            "prompt_chunks_covered": _share(fixed, first),
            "own_prompts_covered": _share(own, first),
        }
    return out


def _share(prompts: list[list[int]], first: set[int]) -> float:
    return sum(c in first for p in prompts for c in p) / max(sum(map(len, prompts)), 1)


def _prompt_chunks(home: Path, questions: Path) -> list[list[int]]:
    """Each question's prompt chunks as the shipped answer path selects them (no model)."""
    from assistant.services import open_services

    ctx = open_services(home)
    answerer, out = ctx.answerer(), []
    for line in questions.read_text(encoding="utf-8").splitlines():
        question = json.loads(line)["question"]
        hits, _ = answerer.quote(question, ctx.embedder.embed_batch([question])[0])
        out.append([h.record.chunk_id for h in hits])
    return out


def _acceptance(measured: dict, budgets: dict[str, int]) -> dict:
    """Issue 47: the flooded plan's first 500 chunks hold at most 5% flood chunks, and after 30
    minutes the recent questions are covered no less with the flood than without (their
    source mails, and the prompts' chunks: the plan's part)."""
    flooded, plain = measured["mailbox + flood"], measured["mailbox"]
    at = [b for b in budgets if b.startswith("30 min")]
    return {
        "flood_share_500": flooded["by_budget"]["500"]["flood_share"],
        "flood_share_500_ok": flooded["by_budget"]["500"]["flood_share"] <= 0.05,
        "not_lower_at_30_min": all(
            flooded["by_budget"][b][k] >= plain["by_budget"][b][k]
            for b in at
            for k in ("question_mails_covered", "prompt_chunks_covered")
        ),
        "questions_with_other_prompts": sum(
            a != b for a, b in zip(plain["prompts"], flooded["prompts"], strict=True)
        ),
    }


if __name__ == "__main__":
    main()
