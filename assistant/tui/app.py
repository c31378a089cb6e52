"""The Textual app: chat by default, Import and Cache screens kept installed (their workers run on
when you leave them), a dark and a light theme. Everything it needs comes in as `AppServices`."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from textual import events, on
from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from assistant.tui.backend import AppServices, SchedulerLike, services_for
from assistant.tui.messages import (
    ImportFinished,
    ImportReported,
    NoticeRead,
    PrecomputeFinished,
    PrecomputeReported,
    WorkFailed,
)
from assistant.tui.screens.cache import CacheScreen
from assistant.tui.screens.chat import ChatScreen
from assistant.tui.screens.import_ import ImportScreen
from assistant.tui.tally import Tally
from assistant.tui.throttle import Throttle

if TYPE_CHECKING:
    from assistant.services import Services

log = logging.getLogger(__name__)
THEMES = ("textual-dark", "textual-light")


class AssistantApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "mail-assistant"
    BINDINGS = [
        Binding("ctrl+o", "open_import", "Import", priority=True),
        Binding("ctrl+b", "open_cache", "Cache", priority=True),
        Binding("ctrl+t", "toggle_theme", "Theme", priority=True),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(self, services: AppServices, theme: str = THEMES[0]) -> None:
        super().__init__()
        self.services = services
        self.tally = Tally()
        self.theme = theme
        self.scheduler: SchedulerLike | None = None
        self._idle_throttle = Throttle(0.2)

    def on_mount(self) -> None:
        self.install_screen(ImportScreen(self.services), "import")
        self.install_screen(CacheScreen(self.services, self.tally), "cache")
        self.push_screen(ChatScreen(self.services, self.tally))
        self.services.activity()  # opening the app is activity: the idle wait starts now
        self.run_worker(self._read_notice, thread=True, group="notice")
        if self.services.idle is not None:
            self.scheduler = self.services.idle(self._idle_progressed, self._idle_done)
            self.scheduler.start()

    def _read_notice(self) -> None:
        """On a worker: the notice may scan the vectors or load the encoder, which the first
        frame does not wait for."""
        notice = self.services.notice
        try:
            text = notice() if callable(notice) else notice
        except Exception as exc:  # the worker's boundary: say it, keep the app running
            log.exception("reading the notice failed")
            text = f"Could not read the knowledge bank: {str(exc) or type(exc).__name__}"
        if text:
            self.post_message(NoticeRead(text))

    @on(NoticeRead)
    def _show_notice(self, m: NoticeRead) -> None:
        self.notify(m.text, severity="warning", timeout=60, markup=False)

    def on_unmount(self) -> None:
        if self.scheduler is not None:
            self.scheduler.shutdown()

    def _idle_progressed(self, event: Any) -> None:
        """Called on the scheduler's thread: only posts a message."""
        if self._idle_throttle.ready(always=event.done == event.total):
            self.post_message(PrecomputeReported(event, idle=True))

    def _idle_done(self, report: Any) -> None:
        """Called on the scheduler's thread: only posts a message."""
        self.post_message(PrecomputeFinished(report.summary(), idle=True))

    @on(PrecomputeReported)
    def _show_idle_progress(self, m: PrecomputeReported) -> None:
        if m.idle:
            e = m.event
            self._show_idle(f"Idle precompute: {e.done}/{e.total} · {e.job}")

    @on(PrecomputeFinished)
    def _show_idle_finished(self, m: PrecomputeFinished) -> None:
        if m.idle:
            self._show_idle(f"Last idle precompute: {m.summary}")
            self.notify(m.summary, title="Precomputed while you were away", markup=False)

    @on(ImportReported)
    def _show_embedding(self, reported: ImportReported) -> None:
        """Every screen's header says how far an import's embedding is: the chat works
        meanwhile (on every stored chunk by words; by meaning on those embedded so far)."""
        m = reported.event
        if m.phase == "embed":
            self.sub_title = embedding_line(m.done, m.total)

    @on(ImportFinished)
    @on(WorkFailed)
    def _import_over(self, m: ImportFinished | WorkFailed) -> None:
        if isinstance(m, ImportFinished) or m.job == "import":
            for screen in self.screen_stack:  # its header line and welcome, read on a worker
                if isinstance(screen, ChatScreen):
                    screen.refresh_library()

    def _show_idle(self, line: str) -> None:
        cache = self.get_screen("cache")
        if isinstance(cache, CacheScreen):
            cache.show_idle(line)

    async def on_event(self, event: events.Event) -> None:
        """Every keypress, click and scroll is user activity: the idle scheduler waits for the
        user to be away (reading an answer with the mouse is not being away)."""
        if isinstance(event, (events.Key, events.MouseDown, events.MouseScrollDown,
                              events.MouseScrollUp)):  # fmt: skip
            self.services.activity()
        await super().on_event(event)

    async def _show(self, name: str) -> Screen:
        """Bring an installed screen up, in place of the other installed one if that is up."""
        screen = self.get_screen(name)
        if self.screen is not screen:
            if isinstance(self.screen, (ImportScreen, CacheScreen)):
                await self.pop_screen()
            await self.push_screen(screen)
        return screen

    async def action_open_import(self) -> None:
        await self._show("import")

    async def action_open_cache(self) -> None:
        await self._show("cache")

    async def action_import_demo(self) -> None:
        screen = await self._show("import")
        if isinstance(screen, ImportScreen):
            screen.start(self.services.demo_paths)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The key for the screen that is up is left out of the footer."""
        own = {"open_import": ImportScreen, "open_cache": CacheScreen}.get(action)
        return own is None or not isinstance(self.screen, own)

    def action_toggle_theme(self) -> None:
        self.theme = THEMES[1] if self.theme == THEMES[0] else THEMES[0]


def embedding_line(done: int, total: int) -> str:
    return f"{done:,} of {total:,} chunks embedded · search and ask work meanwhile"


def make_app(ctx: Services, theme: str = THEMES[0]) -> AssistantApp:
    return AssistantApp(services_for(ctx), theme)
