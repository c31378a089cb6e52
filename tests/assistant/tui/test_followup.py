"""The chat keeps the conversation: a follow-up is turned into a standalone question, shown above
its answer, and (where the app can) retrieved from the last turn's thread first; at 80×24."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from assistant.tui.app import AssistantApp
from assistant.tui.screens.chat import ChatScreen
from assistant.tui.widgets.turn import Turn
from tests.assistant.tui.conftest import SIZE, make_services, wait_for

pytestmark = pytest.mark.asyncio


async def ask(pilot, question: str) -> Turn:
    await pilot.press(*question, "enter")
    screen = pilot.app.screen
    assert isinstance(screen, ChatScreen)
    turn = screen.query_one(f"#turn-{screen.turn}", Turn)
    await wait_for(pilot, lambda: not turn.running)
    return turn


def rewrite_line(turn: Turn) -> str | None:
    widget = turn.query_one(".rewrite", Static)
    return str(widget.content) if widget.display else None


async def test_a_follow_up_shows_what_it_was_turned_into_above_its_answer(loaded_store, tmp_path):
    services, pipeline, _ = make_services(loaded_store, tmp_path)
    focused: list[tuple[str, ...]] = []

    def focus(threads):
        focused.append(tuple(threads))
        return pipeline

    services.focused = focus
    app = AssistantApp(services)
    async with app.run_test(size=SIZE) as pilot:
        first = await ask(pilot, "when does Bram start the demolition")
        assert rewrite_line(first) is None
        second = await ask(pilot, "and why?")
        shown = rewrite_line(second)
        assert shown == "→ asked as: and why? (about: Bram start demolition)"
        children = list(second.children)
        rewrite = second.query_one(".rewrite", Static)
        assert children.index(rewrite) < children.index(second.query_one(".quote", Static))
        assert pipeline.done.question == "and why? (about: Bram start demolition)"
        assert focused == [(first_thread(loaded_store),)]
        assert "→ asked as: and why?" in "\n".join(
            strip.text for strip in pilot.app.screen._compositor.render_strips()
        )


def first_thread(store) -> str:
    row = store.db.execute("SELECT thread_id FROM documents ORDER BY id LIMIT 1").fetchone()
    return row[0]
