"""The support check and the answer's shape: a model sentence is shown plain when its terms stand in
the quote, marked when only other lines of the prompt hold them, dropped otherwise."""

from __future__ import annotations

from assistant.answer.evidence import Evidence, Found
from assistant.answer.shape import (
    NEAREST,
    NOT_FOUND,
    WEAK,
    checked_sentence,
    final_band,
    shown,
)
from assistant.answer.support import says_nothing, sentence_faults, unsupported_terms
from assistant.knowledge.store import ChunkRecord

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


def _found(*lines: str, band: str = "answer") -> Found:
    record = ChunkRecord(1, "\n".join(lines), "email", "Planning", "Bram", "2026-02-20",
                         "p@x", "", "", 0, 0, "")  # fmt: skip
    return Found([Evidence(1, line) for line in lines], "", 0.9, band, record, [record])


SOURCES_KITCHEN = [
    "From: Bram | Date: 2026-02-20 | Subject: Planning\nDemolition starts Monday 2 March. "
    "The tiler comes on 11 March and the plumber on 16 March."
]


def test_a_sentence_whose_terms_stand_in_the_quote_is_shown_plain_and_confirms_it() -> None:
    found = _found("Demolition starts Monday 2 March.")
    sentence, faults = checked_sentence(
        "Demolition starts on Monday 2 March. Then more.", found, "When does demolition start?"
    )
    assert sentence.text == "Demolition starts on Monday 2 March." and not sentence.marked
    assert faults == [] and sentence.confirmed
    assert final_band(found, sentence) == "answer"


def test_the_sentence_read_is_the_models_first_whatever_its_abbreviations_and_list_marker() -> None:
    found = _found("Mr. Murdock's call is scheduled for 10:00am on Tuesday, May 15.")
    question = "When is my call with Mr. Murdock?"
    draft = "- Mr. Murdock's call is on Tuesday, May 15. Our next dinner is July 19."
    sentence, faults = checked_sentence(draft, found, question)
    assert sentence.text == "Mr. Murdock's call is on Tuesday, May 15."
    assert faults == [] and sentence.confirmed
    leaving = _found("I am leaving EBS & Enron as of Aug. 15th.")
    said, _ = checked_sentence("He leaves as of Aug. 15th. Then", leaving, "When is he leaving?")
    assert said.text == "He leaves as of Aug. 15th." and said.confirmed


def test_a_reading_without_the_quotes_term_of_the_kind_asked_does_not_confirm_it() -> None:
    found = _found("Demolition starts Monday 2 March.")
    question = "When does demolition start?"
    sentence, _ = checked_sentence("Bram says demolition starts soon.", found, question)
    assert not sentence.confirmed
    assert final_band(found, sentence) == "weak"
    # content words the quote lacks drop the sentence, but its facts still confirm the quote
    reworded, _ = checked_sentence("Demolition begins Monday 2 March.", found, question)
    assert reworded.text == "" and reworded.confirmed


def test_without_a_kind_asked_only_a_sentence_standing_on_the_quote_confirms_it() -> None:
    found = _found("Use one scorecard per interviewer, filled in before the debrief.")
    question = "What should the interviewers do with the scorecard?"
    # nothing checkable, words the quote lacks: dropped, and it vouches for no quote
    vague, faults = checked_sentence(
        "The scorecard is a tool to evaluate the quality of a candidate.", found, question
    )
    assert vague.text == "" and faults and not vague.confirmed
    assert final_band(found, vague) == "weak"
    said, faults = checked_sentence(
        "Each interviewer fills in one scorecard before the debrief.", found, question
    )
    assert said.text and faults == [] and said.confirmed
    assert final_band(found, said) == "answer"


def test_a_term_only_other_lines_of_the_prompt_hold_is_marked_with_its_reason() -> None:
    found = _found("Demolition starts Monday 2 March.")
    question = "When does the tiler come?"
    sentence, _ = checked_sentence("The tiler comes on 11 March.", found, question, SOURCES_KITCHEN)
    assert sentence.marked and sentence.faults == ("11 March",)
    assert sentence.reason() == "(“11 March” is not in the quoted mail)"
    assert "(“11 March” is not in the quoted mail)" in shown(found, sentence)


def test_a_sentence_with_a_term_no_source_holds_or_that_says_nothing_is_dropped() -> None:
    found = _found("Demolition starts Monday 2 March.")
    question = "When does demolition start?"
    dropped, faults = checked_sentence("It starts on 20011.", found, question, SOURCES_KITCHEN)
    assert dropped.text == "" and "20011" in faults
    assert checked_sentence("The answer is:", found, question)[0].text == ""
    assert checked_sentence("I could not find that.", found, question)[0].text == ""
    assert says_nothing("The answer is: when does demolition start", question)


def test_a_figure_that_disagrees_with_the_quote_on_the_kind_asked_is_a_fault() -> None:
    question = "How much current does the sensor draw?"
    lines = ["The Nordic PPK2 shows 4.6 mA instead of the expected 18 uA."]
    terms, _ = sentence_faults("It draws 2001 mA.", lines, question)
    assert "2001" in terms
    assert sentence_faults("It shows 4.6 mA.", lines, question) == ([], [])


def test_content_words_the_quote_lacks_are_faults_too() -> None:
    lines = ["Demolition starts Monday 2 March."]
    _, words = sentence_faults(
        "Demolition was cancelled on 2 March.", lines, "What about demolition?"
    )
    assert words == ["cancelled"]


def test_what_is_shown_leads_with_the_quote_and_its_mail_or_says_not_found() -> None:
    found = _found("Demolition starts Monday 2 March.")
    text = shown(found)
    assert text.startswith("“Demolition starts Monday 2 March.”")
    assert "— Bram · 2026-02-20 · Planning" in text
    weak = shown(_found("Demolition starts Monday 2 March."), band="weak")
    assert weak.startswith("“Demolition") and weak.endswith(WEAK)
    none = shown(_found("Demolition starts Monday 2 March.", band="none"))
    assert none.splitlines()[:3] == [NOT_FOUND, NEAREST, "- Bram · 2026-02-20 · Planning"]
