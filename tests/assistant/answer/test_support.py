"""The support check: an answer's numbers, dates, names and quotes must stand in its sources."""

from __future__ import annotations

from assistant.answer.answerer import checked
from assistant.answer.evidence import Evidence
from assistant.answer.support import (
    GROUNDED,
    answers_what_was_asked,
    check,
    grounded_share,
    quotable,
    unsupported_terms,
)
from assistant.events import AnswerDone

SOURCES = [
    "From: Daan | Date: 2026-05-30 | Subject: Battery drain\n"
    "The Nordic PPK2 shows 4.6 mA instead of the expected 18 uA. Ticket 2001 has the traces.\n"
    "It moves from 9 June to Tuesday 23 June. Mei Tanaka and Fatima Bennani start in September.\n"
    "The deposit of EUR 4,275.00 went out; the call is at 09:00. Bug FW-1184 is fixed.",
]


def test_a_digit_copied_wrong_is_unsupported() -> None:
    assert unsupported_terms("It is in ticket 20011.", SOURCES, "Which ticket?") == ["20011"]
    assert unsupported_terms("It draws 4.7 mA.", SOURCES, "What current?") == ["4.7"]
    assert unsupported_terms("Bug FW-1148 is fixed.", SOURCES, "Which bug?") == ["FW-1148"]
    assert unsupported_terms("It is in ticket 2001.", SOURCES, "Which ticket?") == []


def test_an_invented_or_swapped_name_is_unsupported() -> None:
    assert unsupported_terms("Gerrit Hoogland signed it.", SOURCES, "Who?") == ["Gerrit Hoogland"]
    assert unsupported_terms("Mei Bennani starts.", SOURCES, "Who starts?") == ["Mei Bennani"]
    assert unsupported_terms("Mei Tanaka starts.", SOURCES, "Who starts?") == []


def test_a_wrong_date_or_weekday_is_unsupported() -> None:
    assert unsupported_terms("It moves to 25 June.", SOURCES, "When?") == ["25 June"]
    assert unsupported_terms("It moves to Friday 23 June.", SOURCES, "When?") == ["Friday"]


def test_the_same_facts_written_differently_are_supported() -> None:
    answer = (
        "It moved from June 9th to Tue 23rd of June; the probe showed 18 µA (4.6mA), the "
        "deposit was €4.275 and the call is at 9:00. Bug FW‑1184 is fixed."
    )
    assert unsupported_terms(answer, SOURCES, "When?") == []
    assert unsupported_terms("About 18uA, not 18 uA.", SOURCES, "How much?") == []


def test_an_answer_that_found_nothing_claims_nothing() -> None:
    assert unsupported_terms("I could not find that in your mail.", SOURCES, "Who?") == []
    assert unsupported_terms("I couldn't find it in your mail, Maya.", SOURCES, "Who?") == []


def test_a_quoted_string_must_be_in_the_sources() -> None:
    assert unsupported_terms('He wrote "ship it on Friday".', SOURCES, "What?") == [
        '"ship it on Friday"'
    ]
    assert unsupported_terms('The PPK2 "shows 4.6 mA".', SOURCES, "What?") == []


def test_an_answer_without_the_kind_of_term_asked_for_is_unsupported() -> None:
    """A wrong answer that claims nothing checkable is still marked."""
    question = "How much was the deposit, and when did it go out?"
    assert check("The deposit was paid by the contractor.", SOURCES, question) == (False, [])
    assert not answers_what_was_asked("It was sent by the bank.", "When did it go out?")
    assert answers_what_was_asked("It draws 4.6 mA on the bench.", "How much current?")


def test_a_name_opening_the_answer_answers_a_who_question() -> None:
    assert answers_what_was_asked("Maya gives the speech.", "Who gives the speech?")
    assert answers_what_was_asked("The answer is: Maya.", "Who gives the speech?")
    assert not answers_what_was_asked("The speech is given by her.", "Who gives the speech?")
    assert answers_what_was_asked("The grey ones.", "Which tiles did I pick?")  # asks no kind


def test_a_figure_that_stands_in_the_sources_but_not_in_the_evidence_line_is_unsupported() -> None:
    """The presence check passes a wrong figure found elsewhere in the sources; an evidence line
    holding another figure of the kind asked for marks it."""
    question = "How much current does the sensor draw?"
    evidence = ["The Nordic PPK2 shows 4.6 mA instead of the expected 18 uA."]
    assert check("It draws 2001 mA.", SOURCES, question, evidence) == (False, ["2001"])
    assert check("It draws 4.6 mA.", SOURCES, question, evidence) == (True, [])
    no_figure = ["Daan measured the drain on the bench."]
    assert check("It draws 2001 mA.", SOURCES, question, no_figure)[0]  # the line cannot tell
    assert check("It draws 2001 mA.", SOURCES, question)[0]  # no evidence line: no verdict


def test_an_answer_that_only_echoes_the_question_or_the_instruction_is_unsupported() -> None:
    instruction = "Answer questions about the user's emails. Use only the context below."
    question = "Why was the battery drain missed?"
    assert not check("The answer is:", SOURCES, question, (), instruction)[0]
    echo = "The battery drain was missed because the battery drain was missed in the context."
    assert not check(echo, SOURCES, question, (), instruction)[0]
    real = "The PPK2 trace showed 4.6 mA, which the soak did not look at."
    assert check(real, SOURCES, question, (), instruction)[0]


SOURCES_KITCHEN = [
    "From: Bram | Date: 2026-02-20 | Subject: Planning\nDemolition starts Monday 2 March. "
    "The tiler comes on 11 March."
]


def test_an_unsupported_answer_gives_its_place_to_the_quoted_evidence() -> None:
    evidence = [Evidence(1, "Demolition starts Monday 2 March.")]
    draft = AnswerDone("When does demolition start?", "It starts on 20011.", [], False, 0, 9)
    done = checked(draft, evidence, SOURCES_KITCHEN, "When does demolition start?", "")
    assert done.answer == "From your mail: “Demolition starts Monday 2 March.”"
    assert done.drafted == "It starts on 20011." and done.unsupported == ["20011"]
    assert not done.supported  # still marked: the model wrote no answer its mail backs
    kept = checked(draft, evidence, SOURCES_KITCHEN, "When does demolition start?", "", False)
    assert kept.answer == "It starts on 20011." and not kept.supported and not kept.drafted


def test_evidence_without_the_kind_asked_for_is_not_quoted() -> None:
    evidence = [Evidence(1, "The tiler is a friend of Bram.")]
    question = "When does demolition start?"
    assert not quotable([e.sentence for e in evidence], question)
    assert not quotable([], "What did Bram say?")
    assert quotable(["Bram says the wall can go."], "What did Bram say?")  # no kind asked
    draft = AnswerDone(question, "It starts on 20011.", [], False, 0, 9)
    done = checked(draft, evidence, SOURCES_KITCHEN, question, "")
    assert done.answer == "It starts on 20011." and not done.supported and not done.drafted


def test_a_supported_answer_is_never_replaced() -> None:
    evidence = [Evidence(1, "Demolition starts Monday 2 March.")]
    draft = AnswerDone("q", "Demolition starts on Monday 2 March.", [], False, 0, 9)
    done = checked(draft, evidence, SOURCES_KITCHEN, "When does demolition start?", "")
    assert done.answer == draft.answer and done.supported and not done.drafted


def test_an_answer_mostly_in_words_no_source_has_is_unsupported() -> None:
    """A drifting answer with nothing checkable in it: most of what it says is in no source."""
    question = "What did we agree about Daan's working week?"
    drift = "The summer was a great time for Daan, but he's not happy about the summer."
    assert grounded_share(drift, SOURCES, question) < GROUNDED
    assert check(drift, SOURCES, question) == (False, [])
    grounded = "Daan reproduced the battery drain with the Nordic PPK2 probe."
    assert grounded_share(grounded, SOURCES, question) >= GROUNDED
    assert check(grounded, SOURCES, question) == (True, [])
