"""The chat screen with a fake pipeline: streaming, sources, cancel, QA hits, the full message,
evidence and the unsupported-answer warning."""

from __future__ import annotations

import pytest
from textual.widgets import ListView, Static

from assistant.answer.evidence import Evidence
from assistant.knowledge.db import open_db
from assistant.knowledge.store import KnowledgeStore
from assistant.tui.app import AssistantApp
from assistant.tui.messages import SourcesFound
from assistant.tui.screens.chat import ChatScreen
from assistant.tui.screens.message import MessageScreen
from assistant.tui.widgets.sources import SourceItem
from assistant.tui.widgets.turn import Turn
from assistant.tui.widgets.welcome import Welcome
from tests.assistant.tui.conftest import SIZE, make_services, wait_for
from tests.assistant.tui.fakes import ANSWER

pytestmark = pytest.mark.asyncio


async def ask(pilot, question: str) -> Turn:
    await pilot.press(*question, "enter")
    screen = pilot.app.screen
    assert isinstance(screen, ChatScreen)
    return screen.query_one(f"#turn-{screen.turn}", Turn)


def badge(turn: Turn) -> str:
    return str(turn.query_one(".badge", Static).content)


def line(turn: Turn, name: str) -> str | None:
    """The text of a line under the answer (None while it is hidden)."""
    widget = turn.query_one(f".{name}", Static)
    return str(widget.content) if widget.display else None


def highlighted(item: SourceItem) -> list[str]:
    """The parts of a source's entry in the Sources panel shown highlighted."""
    text = item.label.content
    return [text.plain[s.start : s.end] for s in text.spans if "reverse" in str(s.style)]


def footer_keys(pilot) -> dict[str, str]:
    """The keys the footer shows, with their descriptions."""
    bindings = pilot.app.screen.active_bindings
    return {key: b.binding.description for key, b in bindings.items() if b.binding.show}


async def test_answer_streams_in_and_its_sources_are_listed(rig):
    rig.pipeline.delay = 0.2
    async with rig.app.run_test(size=SIZE) as pilot:
        turn = await ask(pilot, "when does the kitchen work start")
        await wait_for(pilot, lambda: 0 < len(turn.text) < len(ANSWER))
        partial = turn.text
        await wait_for(pilot, lambda: not turn.running)
        assert ANSWER.startswith(partial.strip()) and turn.text.strip() == ANSWER
        assert "QA-bank miss · KV 0/320 reused · TTFT" in badge(turn)
        items = list(pilot.app.screen.query(SourceItem))
        assert [i.source.title for i in items] == ["Kitchen planning", "Tiles", "Electrician"]
        assert items[0].source.passage == "Demolition starts Monday 2 March."
        assert len(rig.activity) >= len("when does the kitchen work start") + 1


async def test_escape_stops_generation_mid_stream_and_stores_nothing(rig):
    rig.pipeline.delay = 0.2
    async with rig.app.run_test(size=SIZE) as pilot:
        turn = await ask(pilot, "when does the kitchen work start")
        await wait_for(pilot, lambda: len(turn.text) > 0)
        assert footer_keys(pilot)["escape"] == "Stop"
        await pilot.press("escape")
        await wait_for(pilot, lambda: not turn.running)
        assert turn.has_class("stopped") and "stopped after" in badge(turn)
        assert len(turn.text) < len(ANSWER)
        await wait_for(pilot, lambda: rig.pipeline.closed == 1)
        assert rig.pipeline.qa.stats()["entries"] == 0
        assert not pilot.app.screen.answering and "escape" not in footer_keys(pilot)


async def test_a_repeated_question_is_a_qa_hit_with_its_sources(rig):
    async with rig.app.run_test(size=SIZE) as pilot:
        first = await ask(pilot, "when does the kitchen work start")
        await wait_for(pilot, lambda: not first.running)
        second = await ask(pilot, "When does the kitchen work start")
        await wait_for(pilot, lambda: not second.running)
        assert badge(second).startswith("QA-bank hit · KV 0/0")
        assert second.text == ANSWER
        titles = [i.source.title for i in pilot.app.screen.query(SourceItem)]
        assert titles == ["Kitchen planning", "Tiles", "Electrician"]
        assert pilot.app.tally.qa_hits == 1 and pilot.app.tally.questions == 2


async def test_not_what_i_asked_refuses_the_served_answer_and_asks_again(rig):
    async with rig.app.run_test(size=SIZE) as pilot:
        first = await ask(pilot, "when does the kitchen work start")
        await wait_for(pilot, lambda: not first.running)
        assert "ctrl+r" not in footer_keys(pilot)  # a fresh answer: nothing to refuse
        second = await ask(pilot, "When does the kitchen work start")
        await wait_for(pilot, lambda: not second.running)
        assert badge(second).startswith("QA-bank hit")
        assert footer_keys(pilot)["ctrl+r"] == "Not what I asked"
        await pilot.press("ctrl+r")
        screen = pilot.app.screen
        third = screen.query_one(f"#turn-{screen.turn}", Turn)
        assert third.question == "When does the kitchen work start"
        await wait_for(pilot, lambda: not third.running)
        assert badge(third).startswith("QA-bank miss")  # asked again, not served the refused one
        refused, fresh = rig.pipeline.qa.entries()
        assert refused.refused_at > 0.9 and fresh.refused_at == 0
        assert fresh.question == "When does the kitchen work start"
        assert "ctrl+r" not in footer_keys(pilot)


async def test_enter_on_a_source_opens_the_whole_message(rig):
    async with rig.app.run_test(size=SIZE) as pilot:
        turn = await ask(pilot, "what about the tiles")
        await wait_for(pilot, lambda: not turn.running)
        listing = pilot.app.screen.query_one("#source-list", ListView)
        await pilot.press("tab")
        assert pilot.app.focused is listing and listing.index == 0
        await pilot.press("down")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, MessageScreen))
        text = str(pilot.app.screen.query_one("#message-text", Static).content)
        assert "Subject: Tiles" in text and "The tiles arrive on 9 March" in text
        assert "From: Bram de Vries <bram@example.nl>" in text
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ChatScreen))
        assert pilot.app.focused is listing
        await pilot.press("tab", "tab")
        assert pilot.app.focused is pilot.app.screen.query_one("#question")


async def test_theme_toggles_between_dark_and_light(rig):
    async with rig.app.run_test(size=SIZE) as pilot:
        assert pilot.app.theme == "textual-dark"
        await pilot.press("ctrl+t")
        assert pilot.app.theme == "textual-light"
        await pilot.press("ctrl+t")
        assert pilot.app.theme == "textual-dark"


async def test_the_welcome_shows_only_while_the_bank_is_empty(rig, tmp_path):
    async with rig.app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert not pilot.app.screen.query(Welcome)
        assert pilot.app.sub_title == "4 mails · 0 notes"
    services, _, _ = make_services(KnowledgeStore(open_db(None)), tmp_path)
    async with AssistantApp(services).run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert pilot.app.screen.query(Welcome)
        assert pilot.app.focused is pilot.app.screen.query_one("#demo")


DEMOLITION = "when does demolition start on monday"
EVIDENCE = [  # as the pipeline may give them: the second one's spacing differs from its source's
    Evidence(1, "Demolition starts Monday 2 March."),
    Evidence(3, "Wiring is checked  on\n11 March."),
]


async def test_an_unsupported_answer_is_marked_and_shows_its_evidence(rig):
    rig.pipeline.quote = False  # [answer] unsupported = "mark"
    rig.pipeline.reply = "Demolition starts on 20011, says Anouk."
    rig.pipeline.evidence, rig.pipeline.unsupported = EVIDENCE, ["20011", "Anouk"]
    async with rig.app.run_test(size=SIZE) as pilot:
        turn = await ask(pilot, DEMOLITION)
        await wait_for(pilot, lambda: not turn.running)
        assert line(turn, "unsupported") == (
            "⚠ not found in your mail — check the sources (20011, Anouk)"
        )
        assert turn.has_class("unsupported")
        assert line(turn, "evidence") == (
            "Evidence: “Demolition starts Monday 2 March.” [1]\n"
            "Evidence: “Wiring is checked  on\n11 March.” [3]"
        )
        items = list(pilot.app.screen.query(SourceItem))
        assert [i.has_class("evidence") for i in items] == [True, False, True]
        assert highlighted(items[0]) == ["Demolition starts Monday 2 March."]
        assert highlighted(items[1]) == []
        assert highlighted(items[2]) == ["Wiring is checked on 11 March."]
        assert "Bram de Vries · 2026-03-02 · evidence" in items[0].label.content.plain


async def test_an_unsupported_answer_is_replaced_by_its_quoted_evidence(rig):
    """With [answer] unsupported = "quote" (the default) and the real check (no forced mark):
    the draft streams, then the evidence line, which holds the date asked for, stands in its
    place, and the warning says so."""
    rig.pipeline.reply = "Demolition starts on 20011, says Anouk."
    rig.pipeline.evidence = EVIDENCE[:1]
    async with rig.app.run_test(size=SIZE) as pilot:
        turn = await ask(pilot, DEMOLITION)
        await wait_for(pilot, lambda: not turn.running)
        assert rig.pipeline.done.drafted == "Demolition starts on 20011, says Anouk."
        assert line(turn, "answer") == "From your mail: “Demolition starts Monday 2 March.”"
        assert line(turn, "unsupported") == (
            "⚠ the model's answer was not found in your mail (20011, Anouk): quoting your mail "
            "instead"
        )
        assert turn.has_class("unsupported")  # still marked: the quote may not answer


async def test_a_supported_answer_shows_the_real_evidence_and_no_warning(rig):
    """Evidence picked by the real selection (over the fake embedder), shown as it came."""
    rig.pipeline.unsupported = []
    async with rig.app.run_test(size=SIZE) as pilot:
        turn = await ask(pilot, DEMOLITION)
        await wait_for(pilot, lambda: not turn.running)
        assert line(turn, "unsupported") is None and not turn.has_class("unsupported")
        evidence = rig.pipeline.done.evidence
        assert evidence and line(turn, "evidence") == "\n".join(
            f"Evidence: “{e.sentence}” [{e.chunk_id}]"
            for e in evidence  # chunk n is source n
        )
        marked = [i.source.chunk_id for i in pilot.app.screen.query(SourceItem) if i.evidence]
        assert marked == sorted({e.chunk_id for e in evidence})


async def test_a_qa_bank_hit_shows_its_evidence_and_highlights_it(rig):
    rig.pipeline.reply = "Demolition starts on 20011."
    rig.pipeline.evidence, rig.pipeline.unsupported = EVIDENCE[:1], ["20011"]
    async with rig.app.run_test(size=SIZE) as pilot:
        first = await ask(pilot, DEMOLITION)
        await wait_for(pilot, lambda: not first.running)
        second = await ask(pilot, DEMOLITION)
        await wait_for(pilot, lambda: not second.running)
        assert badge(second).startswith("QA-bank hit")
        assert line(second, "evidence") == "Evidence: “Demolition starts Monday 2 March.” [1]"
        assert line(second, "unsupported") == "⚠ not found in your mail — check the sources (20011)"
        items = list(pilot.app.screen.query(SourceItem))
        assert highlighted(items[0]) == ["Demolition starts Monday 2 March."]


async def test_the_sources_panel_lists_the_prompts_chunks_not_the_candidates(rig):
    """The fake retrieves chunks 4, 3, 2, 1 and puts 1, 2, 3 into the prompt, as a reranker
    narrows and reorders: only the prompt's chunks, in prompt order, are ever listed."""
    found: dict[int, list[int]] = {}  # a message is seen again as it bubbles up: keyed by id

    def hook(message) -> None:
        if isinstance(message, SourcesFound):
            found[id(message)] = [s.chunk_id for s in message.sources]

    async with rig.app.run_test(size=SIZE, message_hook=hook) as pilot:
        turn = await ask(pilot, "when does the kitchen work start")
        await wait_for(pilot, lambda: not turn.running)
        items = list(pilot.app.screen.query(SourceItem))
        assert [i.source.title for i in items] == ["Kitchen planning", "Tiles", "Electrician"]
        assert list(found.values()) == [[1, 2, 3]]
