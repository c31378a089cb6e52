"""The CLI's mail subcommands: `thread ID`, `threads --rebuild`, `people NAME`, `chat`
(imported only once one runs)."""

from __future__ import annotations

import signal
import sys
import threading
from argparse import Namespace
from collections.abc import Iterable
from contextlib import closing, suppress

from rich.console import Console
from rich.text import Text

from assistant import events as p
from assistant.answer.chat import Chat
from assistant.cli.output import json_line, nothing_imported
from assistant.mail import thread_update, threads
from assistant.services import Services

console = Console(stderr=True, soft_wrap=True, highlight=False)


def cmd_thread(ctx: Services, args: Namespace) -> int:
    key = ctx.store.thread_key(args.id.lstrip("#"))  # "#12", as `search` shows it, as `show`
    if key is None:
        console.print(
            f"No mail or thread {args.id!r} in {ctx.home.root}. Give the #number `search` shows, "
            "a Message-ID (as `search --json` or `ask --json` show it) or a thread id (a "
            "source's `thread`)."
        )
        return 1
    out = Console(highlight=False, soft_wrap=True)
    for line in threads.render(ctx.store.thread_mails(key)):
        out.print(Text(line))
    return 0


def cmd_threads(ctx: Services, args: Namespace) -> int:
    report = thread_update.rebuild(ctx.store) if args.rebuild else None
    stats = ctx.store.stats()
    if report is not None:
        console.print(
            f"Threads: {report.threads} of two mails or more ({report.by_headers} from reply "
            f"headers, {report.by_subject} from the subject) over {report.mails} mails; "
            f"{report.changed} mails changed thread; {report.chunks_dropped} chunks left out "
            f"(they repeat an earlier mail of their thread); {report.seconds:.2f}s"
        )
    else:
        console.print(f"{stats['threads']} threads over {stats['emails']} mails "
                      "(`assistant threads --rebuild` computes them again)")  # fmt: skip
    return 0


def cmd_people(ctx: Services, args: Namespace) -> int:
    """Who `args.name` resolves to in the address book, and why; what a question naming them
    then does (filters, or ranks)."""
    book = ctx.reader.people()
    resolved = book.resolve(args.name)
    if args.json:
        json_line(people_dict(resolved))
        return 0
    out = Console(highlight=False, soft_wrap=True)
    for line in people_lines(resolved):
        out.print(Text(line))
    return 0


def people_dict(resolved) -> dict:
    return {
        "name": resolved.asked,
        "owner": resolved.is_owner,
        "people": [
            {"name": m.person.name, "addresses": sorted(m.person.addresses), "because": m.why,
             "sent": m.person.sent, "received": m.person.received, "names": m.person.why}
            for m in resolved.matches
        ],
    }  # fmt: skip


def people_lines(resolved) -> list[str]:
    n = len(resolved.matches)
    if resolved.is_owner:
        head = f"{resolved.asked}: you (the mailbox's owner): a question naming you is no filter"
    elif n == 0:
        head = f"{resolved.asked}: no one in your mail; a question naming them ranks by the words"
    elif n == 1:
        head = f"{resolved.asked}: one person; a question naming them filters to their mail"
    else:
        head = (f"{resolved.asked}: {n} people; a question naming them ranks their mail first "
                "and does not filter")  # fmt: skip
    lines = [head]
    for m in resolved.matches:
        person = m.person
        lines.append(f"  {person.shown()}  ({person.sent} sent, {person.received} received)")
        lines.append(f"    because: {m.why}")
        lines += [f"    {why}" for why in person.why[:6] if why != m.why]  # said once
    return lines


def cmd_chat(ctx: Services, args: Namespace) -> int:
    """One question a line on stdin; a follow-up is answered against the last turn."""
    if nothing_imported(ctx):
        return 1
    chat = Chat(ctx.answerer(), ctx.focused_answerer)
    for question in _questions(args.json):
        if args.json:
            json_line(_final(chat, question))
        else:
            _print_turn(chat, question)
    return 0


def _questions(quiet: bool) -> Iterable[str]:
    while True:
        if not quiet and sys.stdin.isatty():
            console.print("[bold]>[/] ", end="")
        line = sys.stdin.readline()
        if not line:
            return
        if line.strip():
            yield line.strip()


def _final(chat: Chat, question: str) -> dict:
    """The question's one JSON object: as asked, as answered, the answer and its sources."""
    data = {"question": question, "standalone": question, "because": []}
    for event in chat.answer(question):
        if isinstance(event, p.QuestionRewritten):
            data.update(standalone=event.standalone, because=list(event.because))
        elif isinstance(event, p.AnswerDone):
            data.update(
                answer=event.answer, sources=event.sources, mail=event.mail,
                not_found=event.not_found, band=event.band, qa_hit=event.qa_hit,
            )  # fmt: skip
    return data


class _Interrupt:
    """While a chat turn is answered, Ctrl-C stops that answer, not the chat (as a shell's or
    psql's prompt does); a second Ctrl-C before it stops ends the chat as usual."""

    def __init__(self) -> None:
        self.pressed, self._before = False, None

    def __call__(self) -> bool:
        return self.pressed

    def __enter__(self) -> _Interrupt:
        if threading.current_thread() is threading.main_thread():
            self._before = signal.signal(signal.SIGINT, self._press)
        return self

    def __exit__(self, *exc) -> None:
        if self._before is not None:
            signal.signal(signal.SIGINT, self._before)

    def _press(self, signum, frame) -> None:
        if self.pressed:
            raise KeyboardInterrupt
        self.pressed = True


def _print_turn(chat: Chat, question: str) -> None:
    out = Console(highlight=False, soft_wrap=True)
    stop = _Interrupt()
    # the model's Stopped ends the turn within a piece; a turn left between events is closed
    with stop, suppress(p.Stopped), closing(chat.answer(question, stop=stop)) as events:
        _print_events(out, events, stop)
    if stop.pressed:
        out.print(Text("(stopped; Ctrl-C at the prompt or Ctrl-D ends the chat)", style="dim"))
    out.print()


def _print_events(out: Console, events, stop: _Interrupt) -> None:
    for event in events:
        if stop.pressed:  # between the steps no model runs in (retrieval, loading)
            return
        if isinstance(event, p.QuestionRewritten):
            out.print(Text(f"→ asked as: {event.standalone}", style="dim italic"))
        elif isinstance(event, p.AnswerDone):
            out.print(Text(event.answer))
            for i, s in enumerate(event.sources, 1):
                when = (s.get("date") or "")[:10]
                where = s.get("message_id") or s.get("note_path")
                line = f"[{i}] {s.get('sender') or 'note'} · {when} · {s.get('title')} ({where})"
                thread = f" · thread {s['thread']}" if s.get("thread") else ""
                out.print(Text(line + thread, style="dim"))
