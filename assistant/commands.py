"""The CLI's subcommands (imported only once a command runs)."""

from __future__ import annotations

import json
import logging
import os
from argparse import Namespace
from dataclasses import asdict
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from assistant.config import ConfigError, Settings, load_settings
from assistant.home import bundled, open_home, touch_private
from assistant.importer import ImportProgressed, ImportReport
from assistant.ingest import SourceError
from assistant.knowledge.db import DatabaseError
from assistant.knowledge.embeddings import vectors_notice
from assistant.knowledge.shipped import ModelMissing
from assistant.llm import LLMError
from assistant.output import dump_json
from assistant.services import Services, open_services

console = Console(stderr=True, soft_wrap=True)


_PROGRESS_COLUMNS = (
    TextColumn("{task.description}"),
    BarColumn(),
    MofNCompleteColumn(),
    TextColumn("{task.fields[rate]:>8.1f}/s"),
    TimeElapsedColumn(),
)


# what the embedding bar says: the import need not be waited for
EMBEDDING_LABEL = "embedding chunks (search and ask work meanwhile)"


def user_errors() -> tuple[type[Exception], ...]:
    return (ConfigError, DatabaseError, ModelMissing, SourceError, FileNotFoundError, LLMError)


def run_command(args: Namespace) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    home = open_home(args.home)
    settings = load_settings(home.config_file)
    apply_switches(settings, args)
    ctx = open_services(home, settings)
    _log_to_file(ctx)
    handler = {
        None: cmd_app,
        "import": cmd_import,
        "search": cmd_search,
        "stats": cmd_stats,
        "demo": cmd_demo,
        "ask": cmd_ask,
        "precompute": cmd_precompute,
    }
    return handler[args.command](ctx, args)


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


def _log_to_file(ctx: Services) -> None:
    path = ctx.home.log_dir / "assistant.log"
    touch_private(path)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger("assistant").addHandler(handler)
    logging.getLogger("assistant").setLevel(logging.INFO)


def cmd_app(ctx: Services, args: Namespace) -> int:
    from assistant.tui.app import make_app

    make_app(ctx).run()
    return 0


def cmd_import(ctx: Services, args: Namespace) -> int:
    report = import_with_progress(ctx, args.paths)
    if args.json:
        dump_json(_report_dict(report))
    else:
        print_report(ctx, report)
    return 1 if report.seen == 0 and report.errors else 0


def cmd_demo(ctx: Services, args: Namespace) -> int:
    data = bundled("data")
    report = import_with_progress(ctx, [data / "mail" / "demo.mbox", data / "notes"])
    print_report(ctx, report)
    console.print(
        f"\nDemo imported into {ctx.home.root}. Try: "
        f'[bold]assistant --home {ctx.home.root} search "when does the kitchen work start"[/]'
    )
    return 0


def import_with_progress(ctx: Services, paths: list[Path]) -> ImportReport:
    importer = ctx.importer()
    with Progress(*_PROGRESS_COLUMNS, console=console, transient=False) as progress:
        tasks: dict[str, int] = {}

        def notify(event: ImportProgressed) -> None:
            label = "reading mail & notes" if event.phase == "read" else EMBEDDING_LABEL
            if event.phase not in tasks:
                tasks[event.phase] = progress.add_task(label, total=event.total, rate=0.0)
            task = tasks[event.phase]
            elapsed = progress.tasks[task].elapsed or 1e-9
            progress.update(
                task,
                completed=event.done,
                total=max(event.total, event.done),
                rate=event.done / elapsed,
            )

        return importer.run(paths, notify)


def print_report(ctx: Services, report: ImportReport) -> None:
    from rich.markup import escape

    console.print(f"[bold]Import:[/] {report.summary()}")
    rate = report.seen / report.read_seconds if report.read_seconds else 0.0
    console.print(
        f"read {report.seen} items in {report.read_seconds:.1f}s ({rate:.0f}/s); "
        f"embedded {report.embedded} chunks in {report.embed_seconds:.1f}s"
    )
    for folder, counts in sorted(report.folders.items()):
        console.print(
            f"  {escape(folder)}: {counts['added']} added, {counts['already']} already stored",
            highlight=False,
        )
    for issue in (report.errors + report.warnings)[:20]:
        console.print(
            f"  [{'red' if issue.severity == 'error' else 'yellow'}]{issue}[/]",
            markup=True,
            highlight=False,
        )
    hidden = len(report.errors) + len(report.warnings) - 20
    if hidden > 0:
        console.print(f"  … and {hidden} more in {ctx.home.log_dir / 'assistant.log'}")


def _report_dict(report: ImportReport) -> dict:
    data = asdict(report)
    data["errors"] = [asdict(i) for i in report.errors]
    data["warnings"] = [asdict(i) for i in report.warnings]
    return data


def cmd_search(ctx: Services, args: Namespace) -> int:
    k = args.top or ctx.settings.retrieval.top_k
    if ctx.settings.rerank == "off" or not ctx.reranker.active:  # auto: the check's choice
        hits = ctx.retriever.search(args.query, k=k, mode=args.mode)
    else:  # the prompt's selection (rerank/selection.py), k chunks instead of context_chunks
        from assistant.rerank.selection import select

        duplicates = ctx.settings.answer.duplicates
        hits = select(ctx.retriever, ctx.reranker, args.query, k, duplicates, search_mode=args.mode)
    if args.mode != "bm25":
        _warn_unembedded(ctx)
    if args.json:
        dump_json([_hit_dict(rank, hit) for rank, hit in enumerate(hits, 1)])
        return 0
    if not hits:
        console.print("No results. Is anything imported? Try `assistant stats`.")
        return 0
    out = Console()
    for rank, hit in enumerate(hits, 1):
        r = hit.record
        who = "note" if r.kind == "note" else r.sender
        out.print(
            f"[bold]{rank:2d}. {r.title}[/]  [dim]{who} · {r.date[:10]} · score {hit.score:.4f}[/]",
            highlight=False,
        )
        body = r.passage.replace("\n", " ")
        out.print(f"    {body[:240]}{'…' if len(body) > 240 else ''}", highlight=False)
    return 0


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


def _hit_dict(rank: int, hit) -> dict:
    r = hit.record
    return {
        "rank": rank,
        "score": hit.score,
        "bm25_rank": hit.bm25_rank,
        "dense_rank": hit.dense_rank,
        **r.ref(),
        "subject": r.title if r.kind == "email" else None,
        "text": r.text,
    }


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
    stats["encoder"] = f"{embedder.name} ([embedding] backend {chosen})"
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

    out = Console(highlight=False)
    _warn_unembedded(ctx)
    answerer = ctx.answerer()
    if args.fresh:
        refused = answerer.refuse_hit(args.question)
        if refused is not None and not args.json:
            console.print(
                f"[yellow]Not served again[/] for questions this far from "
                f"“{escape(refused.question)}” (cosine {refused.similarity:.3f}); asking again"
            )
    layers = NO_CACHE if args.no_cache else ALL_LAYERS
    for event in answerer.answer(args.question, layers):
        if args.json:
            print(json.dumps(_event_dict(event), ensure_ascii=False, default=str), flush=True)
        elif isinstance(event, p.QAHitFound):
            console.print(
                f"[green]Remembered answer[/] (to “{escape(event.question)}”, "
                f"cosine {event.similarity:.3f})"
            )
        elif isinstance(event, p.QuoteFound):
            out.print(quote_block(event), soft_wrap=True)
        elif isinstance(event, p.KVReused) and event.reused_tokens:
            console.print(
                f"[dim]KV cache: {event.reused_tokens} of {event.prompt_tokens} "
                f"prompt tokens reused{reuse_note(event.mode, event.repaired)}[/]"
            )
        elif isinstance(event, p.AnswerDone):
            _print_done(out, event)
    return 0


def quote_block(quote):
    """The mail's own lines with the answer span in bold and the mail under them; or "not
    found" with the nearest mails. The model's sentence, when one is shown, follows later."""
    from rich.text import Text

    from assistant.answer import shape

    if quote.band == "none":
        lines = [shape.NOT_FOUND, *shape.nearest_lines(quote.nearest)]
        return Text("\n".join(lines), style="bold yellow")
    text = Text()
    text.append(shape.quoted(quote.lines))
    if quote.span:
        text.highlight_words([quote.span], style="bold")
    text.append(f"\n— {shape.mail_line(quote.mail)}", style="dim")
    if quote.also:
        where = shape.mail_line(quote.also_mail)
        text.append("\n" + shape.also_text(quote.also[0].sentence, where), style="dim")
    return text


def _print_done(out: Console, done) -> None:
    """After the quote: the model's sentence where it stands in the quote (marked, with its
    reason, where only other mails of the prompt hold its terms), then the sources, one line
    per mail, and the timings."""
    from rich.text import Text

    from assistant.answer.shape import WEAK, reason

    if done.sentence:
        out.print(done.sentence, soft_wrap=True, markup=False)
    if done.sentence and not done.supported and done.unsupported:
        out.print(Text(reason(done.unsupported), style="bold yellow"))
    if done.band == "weak":
        out.print(Text(WEAK, style="bold yellow"), soft_wrap=True)
    out.print()
    for i, s in enumerate(done.sources, 1):
        where = s["message_id"] or s["note_path"]
        when = (s["date"] or "")[:10]
        source = f"[{i}] {s['sender'] or 'note'} · {when} · {s['title']} ({where})"
        out.print(Text(source, style="dim"), soft_wrap=True)
    t = done.timings
    console.print(
        f"[dim]quote {t.get('quote', 0.0):.2f}s · total {t['total']:.2f}s · prefill "
        f"{t['prefill']:.2f}s · decode {t['decode']:.2f}s · KV reused "
        f"{done.kv_reused_tokens}/{done.prompt_tokens}"
        f"{reuse_note(done.kv_reuse, done.kv_repaired)}[/]"
    )


def reuse_note(mode: str, repaired: int) -> str:
    """ ", any-order, 24 repaired" after the KV figures when chunks were placed any-order."""
    return f", {mode}, {repaired} repaired" if mode != "exact" else ""


def _event_dict(event) -> dict:
    data = {"event": type(event).__name__}
    if hasattr(event, "hits"):
        data["chunk_ids"] = [h.chunk_id for h in event.hits]
    else:
        data.update(asdict(event))
    return data


def cmd_precompute(ctx: Services, args: Namespace) -> int:
    from assistant.idle import on_ac
    from assistant.precompute import Precompute
    from assistant.schedule import deadline_from

    if args.ac_only and on_ac() is False:
        console.print("On battery power: nothing done (--ac-only).")
        return 0
    runner = Precompute(ctx, settle_seconds=0)
    if args.status:
        dump_json(runner.status())
        return 0
    try:
        deadline = deadline_from(args.duration, args.until)
    except ValueError as exc:
        console.print(f"error: {exc}")
        return 2
    with Progress(*_PROGRESS_COLUMNS, console=console) as progress:
        task = progress.add_task("precomputing", total=None, rate=0.0)

        def notify(event) -> None:
            elapsed = progress.tasks[task].elapsed or 1e-9
            progress.update(
                task, completed=event.done, total=event.total, rate=event.done / elapsed
            )

        report = runner.run(deadline=deadline, notify=notify)
    if args.json:
        dump_json(asdict(report))
    else:
        console.print(f"[bold]Precompute:[/] {report.summary()}")
    return 0
