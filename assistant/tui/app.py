"""The Textual app: chat by default, Import and Cache screens kept installed (their workers run on
when you leave them), a dark and a light theme. Everything it needs comes in as `Services`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events
from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from assistant.tui.screens.cache import CacheScreen
from assistant.tui.screens.chat import ChatScreen
from assistant.tui.screens.import_ import ImportScreen
from assistant.tui.services import Services, services_for
from assistant.tui.tally import Tally

if TYPE_CHECKING:
    from assistant.context import Context

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

    def __init__(self, services: Services, theme: str = THEMES[0]) -> None:
        super().__init__()
        self.services = services
        self.tally = Tally()
        self.theme = theme

    def on_mount(self) -> None:
        self.install_screen(ImportScreen(self.services), "import")
        self.install_screen(CacheScreen(self.services, self.tally), "cache")
        self.push_screen(ChatScreen(self.services, self.tally))

    async def on_event(self, event: events.Event) -> None:
        """Every keypress is user activity: the idle scheduler waits for the user to be away."""
        if isinstance(event, events.Key):
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


def make_app(ctx: Context, theme: str = THEMES[0]) -> AssistantApp:
    return AssistantApp(services_for(ctx), theme)
