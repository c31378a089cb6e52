"""The Import screen: the demo corpus from the empty state, a typed path, a bad path."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from textual.widgets import Input, ProgressBar, Static

from assistant.importing.importer import Importer, ImportProgressed
from assistant.tui.app import AssistantApp
from assistant.tui.backend import Lazy
from assistant.tui.messages import ImportReported, WorkFailed
from assistant.tui.screens.chat import ChatScreen
from assistant.tui.screens.import_ import ImportScreen
from assistant.tui.widgets.welcome import Welcome
from tests.assistant.tui.conftest import SIZE, make_services, wait_for
from tests.assistant.tui.test_chat import ask
from tests.conftest import FakeEmbedder, make_email, write_mbox

pytestmark = pytest.mark.asyncio


def text(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).content)


async def test_demo_from_the_empty_state_imports_with_progress_to_100_percent(store, tmp_path):
    services, _, _ = make_services(store, tmp_path)
    app = AssistantApp(services)
    progress: list = []  # the importer's events, as the screen received them

    def hook(message) -> None:
        if isinstance(message, ImportReported):
            progress.append(message.event)

    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await wait_for(pilot, lambda: bool(app.screen.query("#demo")))
        await wait_for(pilot, lambda: app.focused is not None and app.focused.id == "question")
        await pilot.press("tab", "enter")  # Tab from the question field: the demo button
        await wait_for(pilot, lambda: isinstance(app.screen, ImportScreen))
        screen = app.screen
        await wait_for(pilot, lambda: not screen.running, timeout=60)
        bar = screen.query_one("#bar", ProgressBar)
        stats = store.stats()
        assert bar.percentage == 1.0 and bar.total == stats["chunks"]
        last = {(m.phase, Path(m.path).name): (m.done, m.total) for m in progress}
        assert last[("read", "demo.mbox")] == (214, 214)
        assert last[("embed", "")] == (stats["chunks"], stats["chunks"])
        assert progress[-1].phase == "embed"
        assert text(screen, "#summary").startswith("Done: 244 added")
        assert "0 errors" in text(screen, "#phase")
        assert stats["emails"] == 214 and stats["embedded_chunks"] == stats["chunks"]
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen))
        await pilot.pause()
        assert not app.screen.query(Welcome)
        assert app.focused is app.screen.query_one("#question", Input)


async def test_a_typed_path_is_imported_and_a_bad_one_named(store, tmp_path):
    box = write_mbox(tmp_path / "mine.mbox", [make_email(subject="Hi", msgid="<h@x>")])
    services, _, _ = make_services(store, tmp_path)
    async with AssistantApp(services).run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+o")
        screen = pilot.app.screen
        assert isinstance(screen, ImportScreen)
        await pilot.press(*str(tmp_path / "nothing.mbox"), "enter")
        await wait_for(pilot, lambda: "Done" in text(screen, "#summary"))
        summary = text(screen, "#summary")
        assert "1 skipped with errors" in summary and "nothing.mbox" in summary
        screen.query_one("#path").value = str(box)
        await pilot.press("enter")
        await wait_for(pilot, lambda: "Done: 1 added" in text(screen, "#summary"))
        assert store.stats()["emails"] == 1


class GatedEmbedder(FakeEmbedder):
    """Embeds only once the test opens the gate: the import is held in its embedding phase."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()

    def embed_batch(self, texts):
        self.gate.wait(timeout=60)
        return super().embed_batch(texts)


async def test_the_import_runs_on_in_the_background_while_the_chat_answers(loaded_store, tmp_path):
    services, _, _ = make_services(loaded_store, tmp_path)
    embedder = GatedEmbedder()
    services.importer = Lazy(lambda: Importer(loaded_store, embedder))
    app = AssistantApp(services)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+o")
        screen = app.screen
        assert isinstance(screen, ImportScreen)
        await pilot.click("#demo")
        await wait_for(pilot, lambda: loaded_store.stats()["documents"] == 4 + 244, 60)
        await pilot.press("escape")
        turn = await ask(pilot, "what about the tiles")
        await wait_for(pilot, lambda: not turn.running)
        assert turn.text.strip() and screen.running
        embedder.gate.set()
        await pilot.press("ctrl+o")
        assert app.screen is screen
        await wait_for(pilot, lambda: not screen.running, timeout=60)
        assert screen.query_one("#bar", ProgressBar).percentage == 1.0
        assert text(screen, "#summary").startswith("Done: 244 added")


async def test_the_header_says_how_far_embedding_is_on_every_screen(store, tmp_path):
    services, _, _ = make_services(store, tmp_path)
    app = AssistantApp(services)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+o")  # the import is started on its screen, then left
        await wait_for(pilot, lambda: isinstance(app.screen, ImportScreen))
        importing = app.screen
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen))
        event = ImportProgressed("embed", 3100, 16200, "", 0)
        importing.post_message(ImportReported(event))  # as its worker does
        await wait_for(pilot, lambda: "3,100 of 16,200 chunks embedded" in app.sub_title)
        assert isinstance(app.screen, ChatScreen)  # seen from the chat
        assert "search and ask work meanwhile" in app.sub_title
        importing.post_message(WorkFailed("import", "disk full"))
        await wait_for(pilot, lambda: app.sub_title == "0 mails · 0 notes")


async def test_a_picked_path_is_imported_with_the_next_enter(store, tmp_path):
    """Pick in the tree, then Enter, as the line under it says: the pick focuses the field."""
    from types import SimpleNamespace

    box = write_mbox(tmp_path / "picked.mbox", [make_email(subject="Hi", msgid="<p@x>")])
    services, _, _ = make_services(store, tmp_path)
    async with AssistantApp(services).run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+o")
        screen = pilot.app.screen
        screen.query_one("#browser").focus()
        screen._picked(SimpleNamespace(path=box))
        await pilot.pause()
        assert pilot.app.focused is screen.query_one("#path", Input)
        await pilot.press("enter")
        await wait_for(pilot, lambda: "Done: 1 added" in text(screen, "#summary"))


async def test_an_import_that_ends_in_the_background_clears_the_welcome(store, tmp_path):
    """Demo, then Esc back to the chat before it is done: when the import ends, the welcome
    goes and the question field has the focus (Enter pressed the Demo button again)."""
    services, _, _ = make_services(store, tmp_path)
    gate, importer = threading.Event(), services.importer
    services.importer = Lazy(lambda: (gate.wait(60), importer.get())[1])  # the models load
    app = AssistantApp(services)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.screen.query(Welcome))
        # laid out before it is clicked (a click at a button not placed yet goes nowhere)
        await wait_for(pilot, lambda: app.screen.query_one("#demo").region.width > 0)
        await pilot.click("#demo")
        await wait_for(pilot, lambda: isinstance(app.screen, ImportScreen))
        importing = app.screen
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen))
        await pilot.pause(0.3)
        assert app.screen.query(Welcome) and store.stats()["documents"] == 0
        gate.set()
        await wait_for(pilot, lambda: not importing.running, timeout=60)
        await wait_for(pilot, lambda: not app.screen.query(Welcome))
        assert app.focused is app.screen.query_one("#question", Input)
        assert app.sub_title.endswith("notes") or "embedded" in app.sub_title
