"""What the CLI writes: to stdout for `--json` (UTF-8; ASCII with escapes where stdout's encoding
is not UTF-8; the times it shows are clock.local_time, shared with the TUI, which imports
nothing of cli); the console the commands talk on (stderr) and their progress bar's columns."""

from __future__ import annotations

import json
import sys

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

from assistant.cli.streams import utf8_stdout

console = Console(stderr=True, soft_wrap=True)
PROGRESS_COLUMNS = (
    TextColumn("{task.description}"),
    BarColumn(),
    MofNCompleteColumn(),
    TextColumn("{task.fields[rate]:>8.1f}/s"),
    TimeElapsedColumn(),
)


def dump_json(value) -> None:
    json.dump(value, sys.stdout, ensure_ascii=not utf8_stdout(), indent=2, default=str)
    sys.stdout.write("\n")


def json_line(value) -> None:
    """One JSON object on one line (`ask --json`, `chat --json`), written at once."""
    print(json.dumps(value, ensure_ascii=not utf8_stdout(), default=str), flush=True)


def nothing_imported(ctx) -> bool:
    """True, having said what to run, when the home holds no mail or note yet (a first run, or
    a --home typed wrong): an empty home would answer "Not found in your mail", as if the mail
    had been read."""
    if ctx.store.count_chunks():
        return False
    home = ctx.home.root
    console.print(
        f"No mail or notes in {home} yet: `assistant --home {home} import PATH` reads a mailbox "
        f"or a notes folder, `assistant --home {home} demo` the demo.",
        markup=False,
        highlight=False,
    )
    return True
