"""The chat on an empty home (nothing imported yet): the question field has the focus, the
welcome's buttons are reached by Tab, and a question is told that nothing is imported."""

from __future__ import annotations

import pytest

from assistant.answer.shape import NOT_FOUND
from assistant.knowledge.db import open_db
from assistant.knowledge.store import KnowledgeStore
from assistant.tui.app import AssistantApp
from assistant.tui.widgets.turn import NOTHING_IMPORTED
from assistant.tui.widgets.welcome import Welcome
from tests.assistant.tui.conftest import SIZE, asked, make_services, wait_for
from tests.assistant.tui.test_chat import badge

pytestmark = pytest.mark.asyncio


@pytest.fixture
def empty_app(tmp_path) -> AssistantApp:
    services, _, _ = make_services(KnowledgeStore(open_db(None)), tmp_path)
    return AssistantApp(services)


def focused_id(pilot) -> str | None:
    return pilot.app.focused.id if pilot.app.focused is not None else None


async def test_a_question_typed_at_once_goes_to_the_question_field(empty_app):
    """The demo's button took the focus as the welcome was shown: a question typed straight
    away was lost, and Enter loaded the demo."""
    async with empty_app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: bool(pilot.app.screen.query(Welcome)))
        await pilot.pause()
        assert focused_id(pilot) == "question"
        await pilot.press(*"hi")
        assert pilot.app.screen.query_one("#question").value == "hi"


async def test_tab_reaches_the_welcomes_buttons(empty_app):
    async with empty_app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: bool(pilot.app.screen.query(Welcome)))
        await pilot.pause()
        order = []
        for _ in range(5):
            await pilot.press("tab")
            order.append(focused_id(pilot))
        assert order == ["demo", "import", "source-list", "conversation", "question"]


async def test_a_question_says_nothing_is_imported_not_that_nothing_was_found(empty_app):
    """It said "Not found in your mail.", as if the mail had been read; the CLI's ask, search
    and chat say that nothing is imported and how to import."""
    async with empty_app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: bool(pilot.app.screen.query(Welcome)))
        turn = await asked(pilot, "when does the kitchen work start")
        await wait_for(pilot, lambda: not turn.running)
        assert turn.text == NOTHING_IMPORTED and NOT_FOUND not in turn.text
        assert "empty" in badge(turn) and turn.has_class("empty")
        assert not pilot.app.services.answerer.ready  # no model loaded for it
        assert not pilot.app.screen.answering


async def test_the_welcomes_buttons_show_their_whole_labels_at_80_columns(empty_app):
    """At 80×24 the chat has 48 columns, and the second button was cut to "Import my mai"."""
    from textual.widgets import Button

    async with empty_app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: bool(pilot.app.screen.query("#import")))
        await wait_for(pilot, lambda: pilot.app.screen.query_one("#import").region.width > 0)
        for button in pilot.app.screen.query(Button).results():
            if button.id in ("demo", "import"):
                label = str(button.label)
                assert button.content_region.width >= len(label), label
                inside = pilot.app.screen.query_one(Welcome).content_region
                assert button.region.right <= inside.right, label
