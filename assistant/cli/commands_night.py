"""`assistant night install | uninstall | status`: the night's timer
(assistant/precompute/timer.py) and what the last night did."""

from __future__ import annotations

import os
import sys
from argparse import Namespace
from datetime import date
from typing import TYPE_CHECKING

from rich.console import Console

from assistant.cli.output import dump_json
from assistant.clock import local_time
from assistant.precompute import timer
from assistant.services import Services

if TYPE_CHECKING:
    from cache.prediction import Savings


def cmd_night(ctx: Services, args: Namespace) -> int:
    env, console = dict(os.environ), Console()
    run, which = timer.run_command, timer.default_which
    if args.action == "install":
        try:
            night = timer.Night(ctx.home.root, args.at, args.until, not args.on_battery)
        except ValueError as exc:  # nothing is written for a time the timer could not keep
            print(f"error: {exc}", file=sys.stderr)
            return 2
        done = timer.install(night, env, run, which)
    elif args.action == "uninstall":
        done = timer.uninstall(env, run, which)
    else:
        return _status(ctx, args, timer.installed(env, run, which))
    for line in done:
        console.print(line, markup=False)
    if args.action == "install" and not timer.installed(env, run, which):
        return 1
    return 0


def _status(ctx: Services, args: Namespace, how: str | None) -> int:
    status = {"installed": how or "no", "nights": nights(ctx)}
    if args.json:
        dump_json(status)
        return 0
    for key, value in status.items():
        Console().print(f"{key}: {value}", markup=False)
    return 0


def kv_use(ctx: Services) -> str:
    """The KV nodes' disk use against the budget (no model loads for it)."""
    from cache.kv_tree import KIND

    blobs, budget = ctx.blobs, ctx.settings.cache.kv_budget_bytes
    how = " (10% of the free disk and of what the cache holds)" if ctx.kv_budget_auto else ""
    used = f"{blobs.used(KIND) / 1e9:.2f} GB in {blobs.count(KIND)} nodes"
    return f"{used} of {budget / 1e9:.2f} GB{how}"


def nights(ctx: Services) -> str:
    """What the nights covered and what the last one did."""
    from assistant.precompute.coverage import plan, statement
    from assistant.precompute.plan_file import load_or_plan
    from assistant.precompute.planner import chunk_texts, noded_chunks
    from cache.jobs import JobQueue
    from cache.prediction import History
    from cache.runs import RunLog

    store, pinned = ctx.store, ctx.settings.mail.today

    def planned():
        return plan(store.mail_headers(), store.chunk_documents(), {}, pinned, chunk_texts(store))

    day = pinned or date.today().isoformat()  # the plan's today: pinned, or the newest mail's
    made = load_or_plan(ctx.home.index_dir, store.identity(), store.version(), day, planned)
    last = RunLog(ctx.cache_db).last()
    said = statement(made, noded_chunks(JobQueue(ctx.cache_db)))
    saved = History(ctx.cache_db).savings()
    if saved.kv_tokens or saved.predicted_hits or saved.mean_prompt:  # questions to weigh
        said = f"{said}; {balance(saved)}"
    return f"{said}; {last_night(last)}" if last else f"{said}; no night yet"


def balance(saved: Savings) -> str:
    """What the night puts first, and why: "predictions first: KV nodes saved 1,800 prompt
    tokens, answered predictions 4,200 (2 hits) in the last 7 days"."""
    from cache.prediction import SAVINGS_DAYS

    first = "predictions first" if saved.predictions_first else "KV nodes first"
    return (
        f"{first}: KV nodes saved {saved.kv_tokens:,} prompt tokens, answered predictions "
        f"{saved.by_predictions:,.0f} ({saved.predicted_hits} hits) in the last {SAVINGS_DAYS} days"
    )


def last_night(last: dict) -> str:
    """ "last night (…): 52 min, 900 jobs: 412 nodes (475 an hour), 110 predicted questions,
    30 answered"."""
    from assistant.precompute.runner import per_hour

    kinds = last.get("by_kind") or {}
    answered = kinds.get("decode", 0) + kinds.get("refresh", 0)
    ended, nodes = local_time(last["finished"]), kinds.get("chunk_kv", 0)
    pace = per_hour(nodes, last["minutes"] * 60)
    return (
        f"last night (ended {ended}, {last['stopped']}): {last['minutes']} min, "
        f"{last['jobs']} jobs: {nodes} nodes ({pace:,.0f} an hour), "
        f"{kinds.get('populate', 0)} predicted questions, {answered} answered"
    )
