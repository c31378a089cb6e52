"""`assistant import` and `assistant demo`: read mail and notes with a progress bar, then the
report (what was added, each folder's count, the issues, each naming its file)."""

from __future__ import annotations

from argparse import Namespace
from dataclasses import asdict
from pathlib import Path

from rich.markup import escape
from rich.progress import Progress

from assistant.cli.output import PROGRESS_COLUMNS, console, dump_json
from assistant.home import bundled
from assistant.importing.importer import ImportProgressed, ImportReport
from assistant.services import Services

# what the embedding bar says: the import need not be waited for
EMBEDDING_LABEL = "embedding chunks (search and ask work meanwhile)"


def cmd_import(ctx: Services, args: Namespace) -> int:
    from assistant.importing.remembered import remembered

    paths = args.paths
    if not paths:  # the remembered ones; one not there now (a drive not mounted) is said
        sources = remembered(ctx.store)
        paths = sources.there
        for gone in sources.away:
            console.print(f"not there now, skipped (what it held is kept): {gone}", markup=False)
        for locked in sources.unreadable:
            console.print(f"cannot be read now, skipped (what it held is kept): {locked}",
                          markup=False)  # fmt: skip
        for moved in sources.forgotten:  # all it held moved away and was followed: said once
            console.print(f"no longer read again: not there, and nothing stored is from it now: "
                          f"{moved}", markup=False)  # fmt: skip
    report = import_with_progress(ctx, paths)
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
    with Progress(*PROGRESS_COLUMNS, console=console, transient=False) as progress:
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
            f"  [{'red' if issue.severity == 'error' else 'yellow'}]{escape(str(issue))}[/]",
            markup=True,
            highlight=False,
        )
    hidden = len(report.errors) + len(report.warnings) - 20
    if hidden > 0:
        log_file = escape(str(ctx.home.log_dir / "assistant.log"))
        console.print(f"  … and {hidden} more in {log_file}")


def _report_dict(report: ImportReport) -> dict:
    data = asdict(report)
    data["errors"] = [asdict(i) for i in report.errors]
    data["warnings"] = [asdict(i) for i in report.warnings]
    return data
