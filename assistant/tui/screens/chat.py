"""The chat: questions at the bottom, answers above (the mail's own lines first, then at most one
checked model sentence), the mails they come from beside them."""

from __future__ import annotations

import logging

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Footer, Header, Input, ListView
from textual.worker import get_current_worker

from assistant.answer.chat import Chat
from assistant.tui.backend import AppServices
from assistant.tui.messages import (
    AnswerFailed,
    AnswerFinished,
    AnswerStatusChanged,
    AnswerStopped,
    LibraryRead,
    NothingImported,
    QuoteShown,
    RewriteShown,
    SourcesFound,
    WorkFailed,
)
from assistant.tui.relay import relay_answer
from assistant.tui.screens.message import MessageScreen
from assistant.tui.tally import Tally
from assistant.tui.widgets.question import QuestionInput
from assistant.tui.widgets.sources import SourceItem, SourcesPanel
from assistant.tui.widgets.turn import STOPPING, Turn
from assistant.tui.widgets.welcome import Welcome

log = logging.getLogger(__name__)


def library_line(stats: dict) -> str:
    """The header's line: what the knowledge bank holds."""
    return f"{stats['emails']} mails · {stats['notes']} notes"


class ChatScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "stop", "Stop"),
        Binding("tab", "next_pane", "Next pane"),
        Binding("ctrl+r", "refuse", "Not what I asked"),
    ]
    # Tab's order; the welcome's buttons while it is shown (an empty knowledge bank)
    PANES = ("#question", "#demo", "#import", "#source-list", "#conversation")

    def __init__(self, services: AppServices, tally: Tally) -> None:
        super().__init__()
        self.services = services
        self.tally = tally
        self.turn = 0
        self.answering = False
        self.served = ""  # the last turn's question when the QA bank answered it
        self.chat: Chat | None = None  # the conversation, once the answerer is loaded

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="chat-body"):
            yield VerticalScroll(id="conversation")
            yield SourcesPanel(id="sources")
        yield QuestionInput(placeholder="Ask about your mail and notes; Enter sends", id="question")
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one("#conversation", VerticalScroll).anchor()
        self.query_one("#question", Input).focus()

    def on_screen_resume(self) -> None:
        self.refresh_library()

    def refresh_library(self) -> None:
        """Read what the bank holds on a worker (a large bank's counts take a while), then
        offer the demo or an import while it is empty: on every return to the chat, and when
        an import ends (the app calls this), so an import run in the background clears it."""
        self.run_worker(self._read_library, thread=True, group="library", exclusive=True)

    def _read_library(self) -> None:
        try:
            counts = self.services.knowledge.library_counts()
        except Exception as exc:  # the worker's boundary: say it, keep the app running
            log.exception("reading what the knowledge bank holds failed")
            self.post_message(WorkFailed("library", str(exc) or type(exc).__name__))
            return
        self.post_message(LibraryRead(counts))

    @on(WorkFailed)
    def _library_failed(self, m: WorkFailed) -> None:
        if m.job == "library":
            self.notify(
                f"Could not read the knowledge bank: {m.error}", severity="error", markup=False
            )

    @on(LibraryRead)
    async def _library_read(self, m: LibraryRead) -> None:
        self.app.sub_title = library_line(m.counts)  # an import's embedding line comes back
        # with its next progress message
        empty = not m.counts["documents"]
        shown = self.query(Welcome)
        if empty and not shown:  # the question field keeps the focus: Tab reaches the buttons
            await self.query_one("#conversation").mount(Welcome(id="welcome"))
        elif shown and not empty:
            await shown.remove()
            if self.is_current:
                self.query_one("#question", Input).focus()

    @on(Button.Pressed, "#demo")
    async def _demo(self) -> None:
        await self.app.run_action("import_demo")

    @on(Button.Pressed, "#import")
    async def _import(self) -> None:
        await self.app.run_action("open_import")

    @on(Input.Submitted, "#question")
    def _ask(self, event: Input.Submitted) -> None:
        question = event.value.strip()
        if not question:
            return
        event.input.clear()
        self._start(question)

    def _start(self, question: str, refuse: bool = False) -> None:
        if self.answering:  # the new question stops it (`exclusive`): said at once, as Esc does
            self._turn(self.turn).set_status(STOPPING)
        self.turn += 1
        conversation = self.query_one("#conversation", VerticalScroll)
        conversation.mount(Turn(self.turn, question), before=None)
        conversation.anchor()  # followed again, after the user scrolled up to read
        self.query_one(SourcesPanel).clear()
        self.answering = True
        self.served = ""
        self.refresh_bindings()
        self.answer(self.turn, question, refuse)

    def action_refuse(self) -> None:
        """The QA bank's answer to the last question is not what was asked: that entry is no
        longer served to questions this far from its own, and the question is asked again."""
        if self.served and not self.answering:
            self._start(self.served, refuse=True)

    @work(thread=True, exclusive=True, group="answer")
    def answer(self, turn: int, question: str, refuse: bool = False) -> None:
        worker = get_current_worker()
        try:
            if not self.services.knowledge.count_chunks():  # as the CLI's ask, search, chat
                self.post_message(NothingImported(turn))
                return
            if not self.services.answerer.ready:
                self.post_message(AnswerStatusChanged(turn, "loading the models…"))
            chat = self._chat()
            if refuse:
                chat.refuse_hit(question)
            relay_answer(
                chat,
                self.services.knowledge,
                turn,
                question,
                self.post_message,
                lambda: worker.is_cancelled,
            )
        except Exception as exc:  # the worker's boundary: show it, keep the app running
            log.exception("answering %r failed", question)
            self.post_message(AnswerFailed(turn, str(exc) or type(exc).__name__))

    def _chat(self) -> Chat:
        """The conversation (made on the answer worker, one at a time: `exclusive`)."""
        if self.chat is None:
            self.chat = Chat(self.services.answerer.get(), self.services.focused)
        return self.chat

    def action_stop(self) -> None:
        if self.answering:
            self.workers.cancel_group(self, "answer")
            self._turn(self.turn).set_status(STOPPING)

    def action_next_pane(self) -> None:
        """Question → the welcome's buttons (while it is shown) → Sources → conversation →
        question; elsewhere the usual focus order."""
        panes = [pane for selector in self.PANES for pane in self.query(selector)]
        if self.focused not in panes:
            self.focus_next()
            return
        panes[(panes.index(self.focused) + 1) % len(panes)].focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "refuse":
            return bool(self.served) and not self.answering
        return self.answering if action == "stop" else True

    def _turn(self, n: int) -> Turn:
        return self.query_one(f"#turn-{n}", Turn)

    @on(AnswerStatusChanged)
    def _status(self, m: AnswerStatusChanged) -> None:
        self._turn(m.turn).set_status(m.status)

    @on(RewriteShown)
    def _rewritten(self, m: RewriteShown) -> None:
        self._turn(m.turn).show_rewrite(m.rewritten)

    @on(QuoteShown)
    def _quoted(self, m: QuoteShown) -> None:
        self._turn(m.turn).show_quote(m.quote, m.verdict)
        if m.turn == self.turn:
            self.query_one(SourcesPanel).mark(m.quote.mail)

    @on(SourcesFound)
    def _sources(self, m: SourcesFound) -> None:
        if m.turn == self.turn:
            self.query_one(SourcesPanel).show(m.sources)

    @on(AnswerFinished)
    def _finished(self, m: AnswerFinished) -> None:
        self.tally.record(m.done)
        turn = self._turn(m.turn)
        turn.finish(m.done)
        if m.turn == self.turn:
            self.served = turn.question if m.done.qa_hit else ""
        self._ended(m.turn)

    @on(AnswerStopped)
    def _stopped(self, m: AnswerStopped) -> None:
        self._turn(m.turn).stop(m.seconds)
        self._ended(m.turn)

    @on(NothingImported)
    def _nothing_imported(self, m: NothingImported) -> None:
        self._turn(m.turn).nothing_imported()
        self._ended(m.turn)

    @on(AnswerFailed)
    def _failed(self, m: AnswerFailed) -> None:
        self._turn(m.turn).fail(m.error)
        self._ended(m.turn)

    def _ended(self, turn: int) -> None:
        if turn == self.turn:
            self.answering = False
            self.refresh_bindings()

    @on(ListView.Selected, "#source-list")
    def _open_source(self, event: ListView.Selected) -> None:
        if not isinstance(event.item, SourceItem):
            return
        try:
            doc = self.services.knowledge.document_of_chunk(event.item.source.chunk_id)
        except Exception as exc:  # a database error: said, the chat stays
            log.exception("reading the message of chunk %s failed", event.item.source.chunk_id)
            error = str(exc) or type(exc).__name__
            self.notify(f"Could not read that message: {error}", severity="error", markup=False)
            return
        if doc is None:
            self.notify("That message is no longer in the knowledge bank.", severity="warning")
            return
        self.app.push_screen(MessageScreen(doc))
