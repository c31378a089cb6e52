"""The chat screen at 80×24 over the real Answerer with a fake model and retrieval: the quote
first (its answer span in bold, its mail under it), at most one checked sentence (marked with its
reason, or dropped), "not found" with the nearest mails, sources one line per mail, cancel, QA
hits and the full message."""

from __future__ import annotations

import sqlite3

import pytest
from rich.text import Text
from textual import events
from textual.widgets import Input, ListView, Static

from assistant.answer import shape
from assistant.knowledge.db import open_db
from assistant.knowledge.store import KnowledgeStore
from assistant.tui.app import AssistantApp
from assistant.tui.messages import SourcesFound
from assistant.tui.relay import WRITING
from assistant.tui.screens.chat import ChatScreen
from assistant.tui.screens.message import MessageScreen
from assistant.tui.widgets.sources import SourceItem
from assistant.tui.widgets.turn import STOPPING, Turn
from assistant.tui.widgets.welcome import Welcome
from tests.assistant.tui.conftest import SIZE, make_services, wait_for
from tests.assistant.tui.fakes import ANSWER

pytestmark = pytest.mark.asyncio

DEMOLITION = "when does demolition start on monday"  # the quote: chunk 1's line, span "2 March"
QUOTE = "“Demolition starts Monday 2 March.”"
MAIL = "— Bram de Vries · 2026-03-02 · Kitchen planning"
SENTENCE = "It starts on Monday 2 March."  # every term of it in the quote: shown plain
MARKED = "It starts on 11 March."  # "11 March" is in a mail of the prompt, not in those shown
# the best line of another mail, shown under the quote's mail
ALSO = "Also: “The tiles arrive on 9 March, grey 30x60.” — Bram de Vries · 2026-03-02 · Tiles"
TITLES = ["Kitchen planning", "Tiles", "Electrician"]


async def ask(pilot, question: str) -> Turn:
    await pilot.press(*question, "enter")
    screen = pilot.app.screen
    assert isinstance(screen, ChatScreen)
    return screen.query_one(f"#turn-{screen.turn}", Turn)


def badge(turn: Turn) -> str:
    return str(turn.query_one(".badge", Static).content)


def line(turn: Turn, name: str) -> str | None:
    """The text of a line under the question (None while it is hidden)."""
    widget = turn.query_one(f".{name}", Static)
    return str(widget.content) if widget.display else None


def styled(turn: Turn, name: str, style: str) -> list[str]:
    """The parts of a line's text carrying `style` (e.g. the quote's bold span)."""
    text = turn.query_one(f".{name}", Static).content
    assert isinstance(text, Text)
    return [text.plain[s.start : s.end] for s in text.spans if style in str(s.style)]


def screen_lines(pilot) -> list[str]:
    """The screen as the terminal shows it, row by row."""
    return [strip.text for strip in pilot.app.screen._compositor.render_strips()]


def on_screen(pilot) -> str:
    return "\n".join(screen_lines(pilot))


def bold_on_screen(pilot, part: str) -> bool:
    """Some row of the screen shows `part` in bold."""
    for strip in pilot.app.screen._compositor.render_strips():
        shown = "".join(s.text for s in strip if s.style and s.style.bold)
        if part in shown:
            return True
    return False


def footer_keys(pilot) -> dict[str, str]:
    """The keys the footer shows, with their descriptions."""
    bindings = pilot.app.screen.active_bindings
    return {key: b.binding.description for key, b in bindings.items() if b.binding.show}


def quoted(pilot) -> list[str]:
    """The titles of the sources marked as the quoted mail."""
    return [i.source.title for i in pilot.app.screen.query(SourceItem) if i.has_class("quoted")]


async def test_a_quoted_answer_shows_its_span_in_bold_and_its_mail(rig):
    """(a) The mail's line leads, "2 March" (the date asked for) in bold, on the 80×24 screen;
    the sentence, every term of it in the quote, follows plain; the quote is shown once (no
    Evidence line repeats it) and the Sources panel lists one line per mail, the quoted one
    marked."""
    rig.pipeline.reply = SENTENCE
    async with rig.app.run_test(size=SIZE) as pilot:
        turn = await ask(pilot, DEMOLITION)
        await wait_for(pilot, lambda: not turn.running)
        assert line(turn, "quote") == QUOTE and styled(turn, "quote", "bold") == ["2 March"]
        assert line(turn, "mail") == MAIL
        assert line(turn, "sentence") == SENTENCE
        assert line(turn, "flag") is None and line(turn, "reason") is None
        assert not turn.has_class("marked") and rig.pipeline.done.supported
        assert turn.text == "\n".join([QUOTE, MAIL, ALSO, SENTENCE])
        assert badge(turn).startswith("QA-bank miss · KV 0/320 reused · quote ")
        await pilot.pause()
        screen = on_screen(pilot)
        assert "Demolition starts Monday 2 March." in screen and SENTENCE in screen
        assert bold_on_screen(pilot, "2 March")  # the span, as the terminal draws it
        assert screen.count("Demolition starts Monday") == 1 and "Evidence" not in screen
        assert "1. Bram de Vries · 2026-03-02" in screen and "Kitchen planning · quoted" in screen
        assert quoted(pilot) == ["Kitchen planning"]


async def test_a_marked_sentence_is_shown_with_its_reason(rig):
    """(b) A sentence whose date is in another mail of the prompt, not in the quote: shown,
    with its reason in words on the screen; the answer is marked as not established."""
    rig.pipeline.reply = MARKED
    async with rig.app.run_test(size=SIZE) as pilot:
        turn = await ask(pilot, DEMOLITION)
        await wait_for(pilot, lambda: not turn.running)
        assert line(turn, "quote") == QUOTE
        assert line(turn, "sentence") == MARKED
        reason = "(“11 March” is not in the quoted mail)"
        assert line(turn, "reason") == reason
        assert turn.has_class("marked") and not rig.pipeline.done.supported
        await pilot.pause()
        screen = on_screen(pilot)
        assert MARKED in screen and reason in screen


async def test_not_found_says_so_and_lists_the_nearest_mails(rig):
    """(c) No line clears the bar: "Not found in your mail." and the three nearest mails, on
    the screen; no quote, no model sentence (the model is not run)."""
    rig.pipeline.reply, rig.pipeline.band = SENTENCE, "none"
    async with rig.app.run_test(size=SIZE) as pilot:
        turn = await ask(pilot, "who is the architect")
        await wait_for(pilot, lambda: not turn.running)
        assert line(turn, "flag") == shape.NOT_FOUND
        nearest = [f"- Bram de Vries · 2026-03-02 · {t}" for t in TITLES]
        assert line(turn, "mail") == "\n".join([shape.NEAREST, *nearest])
        assert line(turn, "quote") is None and line(turn, "sentence") is None
        assert turn.has_class("not-found") and rig.pipeline.done.not_found
        assert badge(turn).startswith("QA-bank miss · KV 0/0 reused")
        assert rig.pipeline.qa.stats()["entries"] == 0  # nothing remembered
        await pilot.pause()
        screen = on_screen(pilot)
        assert shape.NOT_FOUND in screen and shape.NEAREST in screen
        assert all(title in screen for title in TITLES) and SENTENCE not in screen
        assert quoted(pilot) == []


async def test_a_quote_the_models_reading_does_not_confirm_is_flagged(rig):
    """The model's sentence names no date of the quote: the quote stays, flagged."""
    rig.pipeline.reply = "Bram says the demolition starts soon."
    async with rig.app.run_test(size=SIZE) as pilot:
        turn = await ask(pilot, DEMOLITION)
        await wait_for(pilot, lambda: not turn.running)
        assert line(turn, "flag") == shape.WEAK and line(turn, "quote") == QUOTE
        assert turn.has_class("marked") and rig.pipeline.done.band == "weak"
        assert turn.text.startswith(shape.WEAK + "\n" + QUOTE)


async def test_a_sentence_with_terms_in_no_mail_is_dropped(rig):
    """The model's draft names "Bram" and a "last mail", which no line of the prompt says:
    it is never shown, the quote stands alone."""
    async with rig.app.run_test(size=SIZE) as pilot:
        turn = await ask(pilot, DEMOLITION)
        await wait_for(pilot, lambda: not turn.running)
        assert rig.pipeline.done.drafted == ANSWER
        assert line(turn, "sentence") is None and line(turn, "reason") is None
        assert turn.text == f"{QUOTE}\n{MAIL}\n{ALSO}" and not turn.has_class("marked")
        await pilot.pause()
        assert "says Bram" not in on_screen(pilot)


async def test_the_quote_shows_before_the_model_writes_and_the_draft_never_streams(rig):
    rig.pipeline.delay = 0.2
    rig.pipeline.reply = "It starts on Monday 2 March, after the tiles are chosen."
    async with rig.app.run_test(size=SIZE) as pilot:
        turn = await ask(pilot, DEMOLITION)
        await wait_for(pilot, lambda: badge(turn).startswith(WRITING))
        assert turn.running and turn.text == f"{QUOTE}\n{MAIL}\n{ALSO}"
        items = list(pilot.app.screen.query(SourceItem))
        assert [i.source.title for i in items] == TITLES and quoted(pilot) == ["Kitchen planning"]
        await pilot.pause(0.5)  # words are streaming: none of them is shown
        assert "It starts" not in turn.text and "It starts" not in on_screen(pilot)
        await wait_for(pilot, lambda: not turn.running, timeout=20)
        assert line(turn, "sentence") is None  # "tiles", "chosen": not in the quote
        assert len(rig.activity) >= len(DEMOLITION) + 1


async def test_escape_stops_generation_mid_sentence_and_stores_nothing(rig):
    rig.pipeline.delay = 0.2
    rig.pipeline.reply = SENTENCE
    async with rig.app.run_test(size=SIZE) as pilot:
        turn = await ask(pilot, DEMOLITION)
        await wait_for(pilot, lambda: badge(turn).startswith(WRITING))
        assert footer_keys(pilot)["escape"] == "Stop"
        await pilot.press("escape")
        await wait_for(pilot, lambda: not turn.running)
        assert turn.has_class("stopped") and "stopped after" in badge(turn)
        assert line(turn, "quote") == QUOTE and line(turn, "sentence") is None
        await wait_for(pilot, lambda: rig.pipeline.closed == 1)
        assert rig.pipeline.qa.stats()["entries"] == 0
        assert not pilot.app.screen.answering and "escape" not in footer_keys(pilot)


async def test_a_remembered_answer_has_the_same_shape_and_its_sources(rig):
    """A QA-bank hit: its quote found afresh (span in bold), its sentence, its mails listed
    (they come after the quote) with the quoted one marked."""
    rig.pipeline.reply = SENTENCE
    async with rig.app.run_test(size=SIZE) as pilot:
        first = await ask(pilot, DEMOLITION)
        await wait_for(pilot, lambda: not first.running)
        second = await ask(pilot, DEMOLITION.capitalize())
        await wait_for(pilot, lambda: not second.running)
        assert badge(second).startswith("QA-bank hit · KV 0/0")
        assert second.text == first.text == "\n".join([QUOTE, MAIL, ALSO, SENTENCE])
        assert styled(second, "quote", "bold") == ["2 March"]
        titles = [i.source.title for i in pilot.app.screen.query(SourceItem)]
        assert titles == TITLES and quoted(pilot) == ["Kitchen planning"]
        assert pilot.app.tally.qa_hits == 1 and pilot.app.tally.questions == 2


async def test_not_what_i_asked_refuses_the_served_answer_and_asks_again(rig):
    rig.pipeline.reply = SENTENCE
    async with rig.app.run_test(size=SIZE) as pilot:
        first = await ask(pilot, DEMOLITION)
        await wait_for(pilot, lambda: not first.running)
        assert "ctrl+r" not in footer_keys(pilot)  # a fresh answer: nothing to refuse
        second = await ask(pilot, DEMOLITION.capitalize())
        await wait_for(pilot, lambda: not second.running)
        assert badge(second).startswith("QA-bank hit")
        assert footer_keys(pilot)["ctrl+r"] == "Not what I asked"
        await pilot.press("ctrl+r")
        screen = pilot.app.screen
        third = screen.query_one(f"#turn-{screen.turn}", Turn)
        assert third.question == DEMOLITION.capitalize()
        await wait_for(pilot, lambda: not third.running)
        assert badge(third).startswith("QA-bank miss")  # asked again, not served the refused one
        refused, fresh = rig.pipeline.qa.entries()
        assert refused.refused_at > 0.9 and fresh.refused_at == 0
        assert fresh.question == DEMOLITION.capitalize()
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


async def test_a_message_that_cannot_be_read_is_said_not_a_crash(rig, monkeypatch):
    """Enter on a source reads its message; a database error there ended the app with a
    traceback, the conversation lost."""

    def locked(chunk_id: int) -> dict:
        raise sqlite3.OperationalError("database is locked")

    async with rig.app.run_test(size=SIZE) as pilot:
        turn = await ask(pilot, "what about the tiles")
        await wait_for(pilot, lambda: not turn.running)
        monkeypatch.setattr(rig.app.services.knowledge, "document_of_chunk", locked)
        await pilot.press("tab", "enter")
        await pilot.pause()
        shown = [n.message for n in pilot.app._notifications]
        assert shown == ["Could not read that message: database is locked"]
        assert isinstance(pilot.app.screen, ChatScreen) and pilot.app.is_running


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
        assert pilot.app.focused is pilot.app.screen.query_one("#question")


async def test_the_sources_panel_lists_the_prompts_chunks_not_the_candidates(rig):
    """The fake retrieves chunks 4, 3, 2, 1 and puts 1, 2, 3 into the prompt, as a reranker
    narrows and reorders: only the prompt's chunks, in prompt order, are ever listed."""
    found: dict[int, list[int]] = {}  # a message is seen again as it bubbles up: keyed by id

    def hook(message) -> None:
        if isinstance(message, SourcesFound):
            found[id(message)] = [s.chunk_id for s in message.sources]

    async with rig.app.run_test(size=SIZE, message_hook=hook) as pilot:
        turn = await ask(pilot, DEMOLITION)
        await wait_for(pilot, lambda: not turn.running)
        items = list(pilot.app.screen.query(SourceItem))
        assert [i.source.title for i in items] == TITLES
        assert list(found.values()) == [[1, 2, 3]]


class HeldReader:
    """A reader whose verdict waits for the test: "checking…" can be seen before it comes. Its
    margin for every excerpt is `margin` (the decision over it is answer/judge.py's own)."""

    def __init__(self, margin: float) -> None:
        import threading

        from assistant.answer.judge import Bars

        self.margin, self.bars, self.go = margin, Bars(0.0, -3.0, 0.0), threading.Event()

    def states(self, question, excerpts, stop=None):
        self.go.wait(10)
        return [self.margin] * len(excerpts)

    def same(self, stored, asked):
        return 5.0


@pytest.mark.parametrize(
    ("margin", "reply", "flag"),
    [(2.0, "Bram says it starts soon.", None),  # the reader confirms: no mark
     (-1.0, "Bram says it starts soon.", shape.WEAK),  # unsure, and the sentence names no date
     (-1.0, SENTENCE, None)],  # unsure, and the sentence confirms the quote's date
)  # fmt: skip
async def test_the_readers_verdict_replaces_checking_in_place(rig, margin, reply, flag):
    """The quote comes at once marked "checking…"; the reader's verdict replaces the mark:
    none when it confirms the quote; when it is unsure, the model's sentence decides."""
    reader = HeldReader(margin)
    rig.pipeline.judge = reader
    rig.pipeline.reply = reply
    async with rig.app.run_test(size=SIZE) as pilot:
        turn = await ask(pilot, DEMOLITION)
        await wait_for(pilot, lambda: line(turn, "quote") == QUOTE)
        assert line(turn, "flag") == shape.CHECKING and turn.running
        reader.go.set()
        await wait_for(pilot, lambda: not turn.running)
        assert line(turn, "flag") == flag and line(turn, "quote") == QUOTE
        assert rig.pipeline.done.band == ("answer" if flag is None else "weak")


async def test_not_found_stays_said_when_the_reader_was_unsure(rig):
    """The reader, unsure of a "not found" quote, left the sentence to decide; the end of the
    answer then took "Not found in your mail." for the "checking…" mark and hid it, leaving the
    nearest mails under no word of why (seen on the demo: "and who is doing the tiles?")."""
    reader = HeldReader(-1.0)
    reader.go.set()
    rig.pipeline.judge, rig.pipeline.band = reader, "none"
    async with rig.app.run_test(size=SIZE) as pilot:
        turn = await ask(pilot, "who is the architect")
        await wait_for(pilot, lambda: not turn.running)
        assert turn.verdict == "unsure" and rig.pipeline.done.not_found
        assert turn.text.startswith(shape.NOT_FOUND + "\n" + shape.NEAREST)


async def test_a_question_pasted_across_lines_is_asked_whole(rig):
    """A question copied from a mail comes with its line breaks: the field kept only the first
    line ("when does demolition"), and a paste that began with a line break kept nothing."""
    async with rig.app.run_test(size=SIZE) as pilot:
        field = pilot.app.screen.query_one("#question", Input)
        field.post_message(events.Paste("\nwhen does demolition\r\nstart on  monday\n"))
        await pilot.pause()
        assert field.value == DEMOLITION
        await pilot.press("enter")
        turn = pilot.app.screen.query_one("#turn-1", Turn)
        await wait_for(pilot, lambda: not turn.running)
        assert turn.question == DEMOLITION and line(turn, "quote") == QUOTE


async def test_a_question_asked_after_scrolling_up_is_shown_with_its_answer(rig):
    """Scrolling up to read an earlier answer let go of the bottom for good: the next question
    and its answer were added below the view, and Enter seemed to do nothing."""
    rig.pipeline.delay = 0.0
    async with rig.app.run_test(size=(80, 16)) as pilot:
        field = pilot.app.screen.query_one("#question", Input)
        for asked in ("what about the tiles", DEMOLITION):
            field.value = asked
            await pilot.press("enter")
            await wait_for(pilot, lambda: not pilot.app.screen.answering)
        conversation = pilot.app.screen.query_one("#conversation")
        await pilot.pause()
        assert conversation.max_scroll_y > 0 and conversation.scroll_y == conversation.max_scroll_y
        conversation.focus()
        await pilot.press("home")
        await wait_for(pilot, lambda: conversation.scroll_y == 0)
        field.focus()
        field.value = "when does the plumber come"
        await pilot.press("enter")
        await wait_for(pilot, lambda: not pilot.app.screen.answering)
        await pilot.pause()
        assert conversation.scroll_y == conversation.max_scroll_y
        shown = on_screen(pilot)  # the question, and its badge under it
        assert shown.index("› when does the plumber come") < shown.rindex("QA-bank miss")


async def test_a_question_asked_during_an_answer_says_the_first_is_stopping(rig):
    """A new question stops the answer in flight; until that answer reaches a point where it
    can stop (the reader's verdict, a model's prefill), its line went on saying what it was
    doing, as if both were answered. It says "stopping…" at once, then "stopped"."""
    reader = HeldReader(2.0)
    rig.pipeline.judge, rig.pipeline.reply = reader, SENTENCE
    async with rig.app.run_test(size=SIZE) as pilot:
        first = await ask(pilot, DEMOLITION)
        await wait_for(pilot, lambda: line(first, "quote") == QUOTE)  # held at the reader
        pilot.app.screen.query_one("#question", Input).value = "what about the tiles"
        await pilot.press("enter")
        second = pilot.app.screen.query_one("#turn-2", Turn)
        assert badge(first) == STOPPING and first.running
        reader.go.set()
        await wait_for(pilot, lambda: not first.running and not second.running)
        assert first.has_class("stopped") and "stopped after" in badge(first)
        assert badge(second).startswith("QA-bank miss")


async def test_a_click_or_a_scroll_is_activity_as_a_key_is(rig):
    """Reading an answer with the mouse is not being away: the idle precompute waits."""
    async with rig.app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        before = len(rig.activity)
        await pilot.click("#question")
        await pilot.pause()
        assert len(rig.activity) > before
        before = len(rig.activity)
        await pilot.mouse_down("#question")
        await pilot.pause()
        assert len(rig.activity) > before


async def test_a_knowledge_bank_that_cannot_be_read_is_said_and_the_chat_stays(rig, monkeypatch):
    """The header's counts are read on a worker; a database error there (locked by another
    writer, a broken file) ended the app with a traceback. Now it is said, and asking works."""

    def locked() -> dict:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(rig.app.services.knowledge, "library_counts", locked)
    async with rig.app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: bool(pilot.app._notifications))
        shown = [n.message for n in pilot.app._notifications]
        assert shown == ["Could not read the knowledge bank: database is locked"]
        turn = await ask(pilot, DEMOLITION)
        await wait_for(pilot, lambda: not turn.running)
        assert line(turn, "quote") == QUOTE
