"""`assistant` command line. Imports are lazy so that `assistant --help` answers at once."""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path

from assistant.cli.streams import stdout_to_nowhere, tolerate_encoding


class Parser(argparse.ArgumentParser):
    """argparse's, but a choice typed wrong is answered with the one meant, as a misspelt key
    of config.toml is: "invalid choice: 'serach' (…); did you mean 'search'?"."""

    def error(self, message: str):  # type: ignore[override]
        typed = re.search(r"invalid choice: (.*) \(choose from (.*)\)$", message)
        if typed:
            value, choices = typed[1].strip("'"), [c.strip(" '") for c in typed[2].split(",")]
            near = difflib.get_close_matches(value, choices, n=1)
            if near:
                message += f"; did you mean '{near[0]}'?"
            elif " " in value and "ask" in choices:  # `assistant "when is the visit?"`
                message += '; a question goes after ask: assistant ask "…"'
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="assistant",
        description="A private assistant for your mail and notes. Bare `assistant` opens the app.",
    )
    home = argparse.ArgumentParser(add_help=False)
    home.add_argument(
        "--home",
        type=Path,
        help="data folder (default: $ASSISTANT_HOME or the platform's user data dir)",
    )
    parser.add_argument(
        "--home", type=Path, dest="app_home", help="data folder for the app (as for commands)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "import", parents=[home], help="import an mbox, Maildir, .eml folder or notes"
    )
    p.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="none: read again what was imported before (an unchanged mbox is skipped, an "
        "appended one read from where it ended) and embed the chunks that lack a vector",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")

    p = sub.add_parser(
        "search",
        parents=[home],
        help="the mails that best match a question or query terms (`assistant help search`)",
    )
    p.add_argument(
        "query", type=words, help='words, "phrases" and terms: from: to: date: subject: …'
    )
    p.add_argument(
        "-k",
        "--top",
        type=count,
        default=None,
        help="how many mails (default: [retrieval] top_k, 10)",
    )
    p.add_argument("--mode", choices=["hybrid", "bm25", "dense"], default="hybrid")
    add_rerank(p)
    add_filters(p)
    p.add_argument("--json", action="store_true", help="print results as JSON")

    p = sub.add_parser("show", parents=[home], help="print one mail: its headers and body")
    p.add_argument("id", help="the number `search` shows (#12), or a Message-ID")
    p.add_argument("--json", action="store_true", help="print the mail as JSON")

    p = sub.add_parser("help", help="a help page: `assistant help search` lists the query terms")
    p.add_argument("topic", nargs="?", choices=["search"], help="none: the commands")

    p = sub.add_parser("stats", parents=[home], help="what the knowledge bank holds")
    p.add_argument("--json", action="store_true", help="print as JSON")

    p = sub.add_parser("ask", parents=[home], help="answer a question from your mail and notes")
    p.add_argument("question", type=words)
    p.add_argument(
        "--no-cache", action="store_true", help="the naive path: no QA bank, no KV reuse"
    )
    p.add_argument(
        "--fresh",
        action="store_true",
        help="answer from scratch, not from the QA bank; if the answer the bank would have "
        "served differs, it is no longer served to questions as far from its own as this one",
    )
    add_rerank(p)
    add_reuse(p)
    add_filters(p)
    p.add_argument("--json", action="store_true", help="one JSON object per event (JSON lines)")

    sub.add_parser("demo", parents=[home], help="import the bundled demo mailbox and notes")

    p = sub.add_parser("thread", parents=[home], help="print the thread a mail belongs to")
    p.add_argument(
        "id", metavar="ID", help="the number `search` shows (#12), a Message-ID, or a thread id"
    )
    p = sub.add_parser(
        "people", parents=[home], help="who a name in a question stands for, and why"
    )
    p.add_argument("name", help="a name as you would write it in a question: Liz, Steve Kean")
    p.add_argument("--json", action="store_true", help="print as JSON")
    p = sub.add_parser("threads", parents=[home], help="how many threads; compute them again")
    p.add_argument("--rebuild", action="store_true", help="compute every mail's thread again")
    p = sub.add_parser(
        "chat",
        parents=[home],
        help="a conversation: one question a line on stdin; a follow-up (“and when?”) is "
        "turned into a standalone question from the last turn",
    )
    p.add_argument("--json", action="store_true", help="one JSON object a question (JSON lines)")

    p = sub.add_parser(
        "precompute",
        parents=[home],
        help="predict questions and fill the caches now (stops for a question asked meanwhile)",
    )
    when = p.add_mutually_exclusive_group()
    when.add_argument("--for", dest="duration", metavar="DURATION", help="e.g. 2h, 90m, 1h30m")
    when.add_argument("--until", metavar="HH:MM", help="stop at this local time (e.g. 07:00)")
    p.add_argument(
        "--from",
        dest="start",
        metavar="HH:MM",
        help="with --until: run only between the two local times, else do nothing (the night's "
        "timer passes it: woken late, it runs no night into the day)",
    )
    p.add_argument("--ac-only", action="store_true", help="do nothing on battery power")
    p.add_argument("--status", action="store_true", help="show the queue and the last run only")
    p.add_argument(
        "--plan",
        choices=["recent", "access", "newest"],
        default=None,
        help="which chunks get KV nodes first: recent mail and live threads, the most used, "
        "or the newest "
        "(default: [expert.precompute] plan)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")

    p = sub.add_parser(
        "model", parents=[home], help="which model reads and writes; `model use reader NAME`"
    )
    p.add_argument("action", nargs="?", choices=["show", "use"], default="show")
    p.add_argument("role", nargs="?", choices=["reader", "writer"])
    p.add_argument("name", nargs="?", help="a model of the list, a GGUF file, or none (reader)")
    p.add_argument("--measure", action="store_true", help="time each model on this machine")
    p.add_argument("--json", action="store_true", help="print the roles as JSON")

    p = sub.add_parser(
        "night", parents=[home], help="run the night's precompute from a timer, without the app"
    )
    p.add_argument("action", choices=["install", "uninstall", "status"])
    p.add_argument("--at", default="01:00", metavar="HH:MM", help="when the night starts")
    p.add_argument("--until", default="07:00", metavar="HH:MM", help="when it stops")
    p.add_argument("--on-battery", action="store_true", help="run on battery power too")
    p.add_argument("--json", action="store_true", help="status as JSON")
    return parser


def add_rerank(p: argparse.ArgumentParser) -> None:
    from assistant.config import RERANK_MODES

    p.add_argument(
        "--rerank",
        choices=RERANK_MODES,
        default=None,
        help="reranking of the fused candidates: query likelihood (full), a "
        "cross-encoder (cross, cross-pruned) or what the nightly check chose (auto); "
        "default: config `rerank`",
    )


def add_filters(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--today",
        type=day,
        default=None,
        metavar="YYYY-MM-DD",
        help="count relative dates (yesterday, last week, in October) from this day "
        "(default: config [mail] today, else the real today)",
    )
    p.add_argument(
        "--no-filters",
        action="store_true",
        help="read no filters from the question's words (typed terms such as from: still apply)",
    )


def words(text: str) -> str:
    """A query or question: blank is none (it would list or answer from arbitrary mail)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("give some words or query terms (it was empty)")
    return text


def count(text: str) -> int:
    """How many rows: a whole number of at least 1."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return n


def day(text: str) -> str:
    from datetime import date

    try:
        return date.fromisoformat(text).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date YYYY-MM-DD, got {text!r}") from None


def add_reuse(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--reuse",
        choices=["exact", "any-order"],
        default=None,
        help="KV reuse: the exact cached prefix, or every cached chunk "
        "(default: [expert.cache] reuse)",
    )
    p.add_argument(
        "--repair",
        type=repair_policy,
        default=None,
        metavar="POLICY",
        help="with --reuse any-order: none, sink-N, blend-R, evidence or auto (the writer's "
        "measured one; default: [expert.cache] repair)",
    )


def repair_policy(text: str) -> str:
    from assistant.kv.reuse_policy import check_repair

    try:
        check_repair(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    return text


def main(argv: list[str] | None = None) -> int:
    tolerate_encoding()
    try:
        code = run(argv)
        sys.stdout.flush()  # a reader gone is met here, not in Python's exit
        return code
    except KeyboardInterrupt:  # at any moment, the second the command's modules load too
        print(
            "interrupted; everything stored so far is kept — run the same command to resume",
            file=sys.stderr,
        )
        return 130
    except BrokenPipeError:  # `assistant search --json … | head`: the reader had enough
        stdout_to_nowhere()
        return 1


def run(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    # `assistant --home X` (the app) and `assistant CMD --home X`; argparse keeps them apart
    # because a subcommand's default would overwrite the main parser's value
    args.home = getattr(args, "home", None) or args.app_home
    if args.command == "help" and args.topic is None:  # `assistant help`, as a user tries first
        build_parser().print_help()
        print("\n`assistant help search`: the query terms; `assistant COMMAND --help`: the rest.")
        return 0
    if args.command == "help":
        from assistant.mail.help import page

        print_page(page(args.topic), sys.stdout)
        return 0
    from assistant.cli.commands import run_command, user_errors

    try:
        return run_command(args)
    except user_errors() as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def print_page(text: str, out) -> None:
    """A help page (markdown): drawn on a terminal (headings, tables, bold as such), as written
    where it is piped or saved, so `assistant help search | less` and grep keep the source."""
    if not out.isatty():
        print(text, file=out)
        return
    from rich.console import Console
    from rich.markdown import Markdown

    Console(file=out).print(Markdown(text))
