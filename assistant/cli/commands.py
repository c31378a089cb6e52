"""The CLI's subcommands (imported only once a command runs)."""

from __future__ import annotations

import logging
import os
import time
import warnings
from argparse import Namespace
from dataclasses import asdict
from pathlib import Path

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from assistant.cli.answer_output import (
    event_dict,
    print_done,
    print_verdict,
    quote_block,
    reuse_note,
)
from assistant.cli.output import (
    PROGRESS_COLUMNS,
    console,
    dump_json,
    json_line,
    nothing_imported,
)
from assistant.config import ConfigError, ConfigWarning, Settings, load_settings
from assistant.home import HomeError, open_home, touch_private
from assistant.ingest import SourceError
from assistant.knowledge.db import DatabaseError
from assistant.knowledge.embeddings import vectors_notice
from assistant.knowledge.shipped import ModelMissing
from assistant.llm import LLMError
from assistant.services import Services, open_services


def user_errors() -> tuple[type[Exception], ...]:
    from assistant.mail.dates import DateError
    from assistant.mail.query import QueryError

    return (
        ConfigError, DatabaseError, ModelMissing, SourceError, FileNotFoundError, LLMError,
        DateError, QueryError, HomeError,
    )  # fmt: skip


def run_command(args: Namespace) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    home = open_home(args.home)
    settings = _settings_noting_old_keys(home.config_file)
    apply_switches(settings, args)
    ctx = open_services(home, settings)
    _log_to_file(ctx)
    handler = {
        None: cmd_app,
        "search": cmd_search,
        "show": cmd_show,
        "stats": cmd_stats,
        "ask": cmd_ask,
        "precompute": cmd_precompute,
    }
    if args.command == "model":
        from assistant.cli.commands_model import cmd_model

        return cmd_model(ctx, args)
    if args.command == "night":
        from assistant.cli.commands_night import cmd_night

        return cmd_night(ctx, args)
    if args.command in ("import", "demo"):
        from assistant.cli import commands_import

        return getattr(commands_import, f"cmd_{args.command}")(ctx, args)
    if args.command in ("thread", "threads", "chat", "people"):
        from assistant.cli import commands_mail

        return getattr(commands_mail, f"cmd_{args.command}")(ctx, args)
    return handler[args.command](ctx, args)


def _settings_noting_old_keys(config_file: Path) -> Settings:
    """The settings; a key the file holds in an older layout is said on stderr, with its fix."""
    from rich.markup import escape

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConfigWarning)
        settings = load_settings(config_file)
    for w in caught:
        if issubclass(w.category, ConfigWarning):
            console.print(f"[yellow]config:[/] {escape(str(w.message))}")
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    return settings


def apply_switches(settings: Settings, args: Namespace) -> None:
    """The command line's switches over the config's and the environment's."""
    if getattr(args, "rerank", None):
        settings.rerank = args.rerank
    if getattr(args, "reuse", None):
        settings.cache.reuse = args.reuse
    if getattr(args, "repair", None):
        settings.cache.repair = args.repair
    if getattr(args, "plan", None):
        settings.precompute.plan = args.plan
    if getattr(args, "today", None):
        settings.mail.today = args.today
    if getattr(args, "no_filters", False):
        settings.mail.filters = "terms"


def _log_to_file(ctx: Services) -> None:
    path = ctx.home.log_dir / "assistant.log"
    touch_private(path)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger("assistant").addHandler(handler)
    logging.getLogger("assistant").setLevel(logging.INFO)
    # The attachment readers' libraries log (pypdf) or warn (openpyxl) about odd files: into the
    # log, not onto the terminal or the app's screen; what they mean is an import warning anyway.
    logging.captureWarnings(True)
    for name in ("pypdf", "py.warnings"):
        logging.getLogger(name).addHandler(handler)


def cmd_app(ctx: Services, args: Namespace) -> int:
    from assistant.tui.app import make_app

    make_app(ctx).run()
    return 0


def cmd_search(ctx: Services, args: Namespace) -> int:
    from assistant.cli.listing import search

    return search(ctx, args.query, args.top, args.mode, args.json, _warn_unembedded)


def cmd_show(ctx: Services, args: Namespace) -> int:
    from assistant.cli.listing import show

    return show(ctx, args.id, args.json)


def _warn_unembedded(ctx: Services) -> None:
    """Say so when chunks lack a vector from this encoder: an import is still embedding them
    (word search covers them, dense search joins batch by batch), or an import was stopped or
    embedding.backend changed (vectors of two encoders are never mixed)."""
    from rich.markup import escape

    name = ctx.embedder.name
    if ctx.store.all_embedded(name):
        return
    if ctx.presence.embedding_running():
        embedded, total = ctx.store.embedding_counts(name)
        console.print(
            f"[yellow]{embedded:,} of {total:,} chunks embedded so far: word search covers every "
            "chunk, meaning search the embedded ones; an import is embedding the rest.[/]"
        )
        return
    notice = vectors_notice(ctx.store, name, ctx.embedder.backend)
    if notice:
        console.print(f"[yellow]{escape(notice)}[/]")


def cmd_stats(ctx: Services, args: Namespace) -> int:
    from rich.markup import escape

    stats = ctx.store.stats()
    stats["home"] = str(ctx.home.root)
    stats["bytes"] = {
        "knowledge_db": _size(ctx.home.knowledge_db) + _size(Path(f"{ctx.home.knowledge_db}-wal")),
        "indexes": sum(_size(p) for p in ctx.home.index_dir.rglob("*") if p.is_file()),
    }
    stats["reranking"] = _rerank_status(ctx)
    stats["index"] = ctx.retriever.index_plan()
    embedder, configured = ctx.embedder, ctx.settings.embedding.backend
    chosen = embedder.backend
    if configured != chosen:  # "auto" → what it chose for this home
        chosen = f"{configured} → {chosen}"
    stats["encoder"] = f"{embedder.name} ([expert.embedding] backend {chosen})"
    from assistant.cli.commands_night import kv_use, nights

    stats["kv_cache"] = kv_use(ctx)
    stats["night"] = nights(ctx)
    if args.json:
        dump_json(stats)
        return 0
    table = Table(title=f"Knowledge bank in {ctx.home.root}", show_header=False)
    for key, value in stats.items():
        if key == "bytes":
            for name, size in value.items():
                table.add_row(f"{name} size", f"{size / 1e6:.2f} MB")
        elif key == "reranking":
            on = "the fused order" if value["on"] == "off" else value["on"]
            table.add_row("reranking", f"{value['setting']} → {on}")
            table.add_row("rerank check", value["summary"])
        elif key == "folders":
            for name, count in value.items():
                table.add_row(f"folder {escape(name or '(none)')}", f"{count:,} mails")
        elif key == "index":
            for name, item in value.items():
                table.add_row(f"index {name.replace('_', ' ')}", str(item))
        elif key != "home":
            table.add_row(key.replace("_", " "), escape(str(value)))  # "[embedding]" is no tag
    Console().print(table)
    return 0


def _rerank_status(ctx: Services) -> dict:
    """The rerank setting, what is on now (auto: the nightly check's choice), the check."""
    from assistant.rerank import selfcheck

    current = "off" if ctx.settings.rerank == "off" else ctx.reranker.current
    return selfcheck.status(ctx.settings.rerank, current, ctx.rerank_check())


def _size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def cmd_ask(ctx: Services, args: Namespace) -> int:
    from rich.markup import escape

    from assistant import events as p
    from assistant.answer.answerer import ALL_LAYERS, NO_CACHE
    from assistant.answer.shape import remembered

    if nothing_imported(ctx):
        return 1
    out = Console(highlight=False)
    _warn_unembedded(ctx)
    answerer = ctx.answerer()
    layers = NO_CACHE if args.no_cache else ALL_LAYERS
    for note in (ctx.reader_note, ctx.writer_note):
        if note:
            console.print(f"[yellow]{escape(note)}[/]")
    for event in answerer.answer(args.question, layers, fresh=args.fresh):
        if args.json:
            json_line(event_dict(event))
        elif isinstance(event, p.HitTightened):
            console.print(
                f"[yellow]The remembered answer to “{escape(event.question)}” differs from this "
                f"one[/]: it is served from now on only to questions nearer to it than this"
            )
        elif isinstance(event, p.QAHitFound):
            console.print(f"[green]{escape(remembered(event.question, event.made))}[/]")
        elif isinstance(event, p.FiltersRead):
            from assistant.cli.listing import print_filters

            print_filters(console, event.shown, event.matched)
        elif isinstance(event, p.QuoteFound):
            out.print(quote_block(event), soft_wrap=True)
            if event.checking:
                console.print("[dim]checking…[/]")
        elif isinstance(event, p.QuoteJudged):
            print_verdict(out, event)
        elif isinstance(event, p.KVReused) and event.reused_tokens:
            console.print(
                f"[dim]KV cache: {event.reused_tokens} of {event.prompt_tokens} "
                f"prompt tokens reused{reuse_note(event.mode, event.repaired)}[/]"
            )
        elif isinstance(event, p.AnswerDone):
            print_done(out, console, event)
    return 0


def cmd_precompute(ctx: Services, args: Namespace) -> int:
    from assistant.precompute.idle import on_ac
    from assistant.precompute.runner import Precompute
    from assistant.precompute.schedule import deadline_from, in_window

    # the night timer passes --ac-only; [precompute] ac_only holds for every run
    ac_only = "--ac-only" if args.ac_only else ""
    if not ac_only and ctx.settings.precompute.ac_only:
        ac_only = "[precompute] ac_only"
    if ac_only and on_ac() is False:
        console.print(f"On battery power: nothing done ({ac_only}).", markup=False)
        return 0
    if args.status:
        dump_json(Precompute(ctx.precompute_parts(), settle_seconds=0).status())
        return 0
    if args.start and not args.until:
        console.print("error: --from needs --until (the night's start and its end)")
        return 2
    try:
        deadline = deadline_from(args.duration, args.until)
        if args.start and not in_window(args.start, args.until):
            console.print(f"Outside the night ({args.start} to {args.until}): nothing done.")
            return 0
    except ValueError as exc:
        console.print(f"error: {exc}", markup=False)  # the user's words: "[bold]" as typed
        return 2
    runner = Precompute(ctx.precompute_parts(), settle_seconds=0)
    with Progress(*PROGRESS_COLUMNS, console=console) as progress:
        task = progress.add_task("precomputing", total=None, rate=0.0)

        def notify(event) -> None:
            elapsed = progress.tasks[task].elapsed or 1e-9
            progress.update(
                task, completed=event.done, total=event.total, rate=event.done / elapsed
            )

        report = last = runner.run(deadline=deadline, notify=notify)
        # A night goes on in rounds until its morning: each round plans again over what
        # the last one stored, so the next nodes and questions come from the same plan.
        while deadline and time.time() < deadline and last.stopped == "finished" and last.jobs_done:
            last = Precompute(ctx.precompute_parts(), settle_seconds=0).run(
                deadline=deadline, notify=notify
            )
            report = report.then(last)
    if args.json:
        dump_json(asdict(report))
    else:
        console.print(f"[bold]Precompute:[/] {report.summary()}")
    return 0
