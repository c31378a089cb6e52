"""A turn's lines from the core's events (no app needed): the quote's span in bold, the badge, a
marked sentence's reason."""

from __future__ import annotations

import pytest

from assistant.answer.evidence import Evidence
from assistant.events import AnswerDone, QuoteFound
from assistant.tui.widgets.turn import badge, marked, nearest_text, quote_text, reason, source_line

MAIL = {"sender": "Greg Whalley <greg@enron.com>", "date": "2001-10-24", "subject": "Q3"}


def done(**fields) -> AnswerDone:
    return AnswerDone("q", "a", [], False, 480, 620, {"quote": 0.05, "total": 1.0}, **fields)


def test_every_occurrence_of_the_span_is_bold_and_nothing_else():
    lines = [Evidence(1, "We wrote off $1.2 billion."), Evidence(1, "Yes, $1.2 billion.")]
    text = quote_text(QuoteFound(lines, "$1.2 billion", MAIL, "answer", 0.9))
    assert text.plain == "“We wrote off $1.2 billion. Yes, $1.2 billion.”"
    bold = [text.plain[s.start : s.end] for s in text.spans if s.style == "bold"]
    assert bold == ["$1.2 billion", "$1.2 billion"] and len(text.spans) == 2
    assert not quote_text(QuoteFound(lines[:1], "", MAIL, "answer", 0.9)).spans


def test_the_mail_lines_name_the_sender_by_name():
    assert source_line(MAIL) == "— Greg Whalley · 2001-10-24 · Q3"
    assert source_line({"sender": None, "date": None, "subject": "Plans"}) == "— note · Plans"
    quote = QuoteFound([], "", {}, "none", 0.1, nearest=[MAIL, MAIL, MAIL, MAIL])
    assert nearest_text(quote).splitlines() == [
        "The nearest mails:",
        *["- Greg Whalley · 2001-10-24 · Q3"] * 3,
    ]


def test_the_badge_gives_the_time_to_the_quote_and_any_order_reuse():
    assert badge(done()) == "QA-bank miss · KV 480/620 reused · quote 0.05 s · total 1.00 s"
    placed = badge(done(kv_reuse="any-order", kv_repaired=24))
    assert "KV 480/620 reused, any-order, 24 repaired · quote 0.05 s" in placed


def test_only_a_shown_sentence_with_faults_is_marked_with_its_reason():
    shown = done(sentence="It was $2 billion.", unsupported=["$2 billion"], supported=False)
    assert marked(shown) and reason(shown) == "(“$2 billion” is not in the quoted mail)"
    dropped = done(sentence="", unsupported=["$2 billion"], drafted="It was $2 billion.")
    assert not marked(dropped) and not marked(done(sentence="It was $1.2 billion."))


def test_a_question_stopped_while_the_models_load_is_not_asked():
    """Esc during "loading the models…": once the load ends the relay says stopped, and the
    answerer is never asked (it would record the question in the history the night predicts
    from, and the badge would go back to "searching…" as if Esc had been ignored)."""
    from assistant.tui.messages import AnswerStopped
    from assistant.tui.relay import relay_answer

    class NotToBeAsked:
        def answer(self, question):
            raise AssertionError("a stopped question is not asked")

    posted = []
    relay_answer(NotToBeAsked(), None, 3, "When?", posted.append, lambda: True)
    assert [type(m) for m in posted] == [AnswerStopped] and posted[0].turn == 3


@pytest.mark.asyncio
async def test_stopping_is_not_overwritten_by_a_status_under_way():
    from textual.app import App
    from textual.widgets import Static

    from assistant.tui.widgets.turn import STOPPING, Turn

    class One(App):
        def compose(self):
            yield Turn(1, "When?")

    async with One().run_test() as pilot:
        turn = pilot.app.query_one(Turn)
        turn.set_status(STOPPING)
        turn.set_status("searching your mail and notes…")
        await pilot.pause()
        assert str(turn.query_one(".badge", Static).content) == STOPPING
        turn.stop(1.0)
        await pilot.pause()
        assert "stopped after" in str(turn.query_one(".badge", Static).content)
