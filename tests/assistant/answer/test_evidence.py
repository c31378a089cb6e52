"""The quote: the line scorer over the prompt's chunks, the quote's lines and span, the bars,
copies counted once, and the stored line vectors."""

from __future__ import annotations

import numpy as np
import pytest

from assistant.answer.evidence import (
    DEFAULT_WEIGHTS,
    FEATURES,
    SHOWN,
    Evidence,
    LineFinder,
    LineWeights,
    candidates_of,
    mail_key,
    prompt_records,
    whole_kind_shown,
)
from assistant.answer.quoted import QUOTE_CHARS, answer_span, window
from assistant.answer.text import (
    answer_kinds,
    asked_cues,
    asked_forms,
    asked_kinds,
    form_spans,
    holds_cue,
    kind_spans,
)
from assistant.knowledge.store import ChunkRecord
from cache.db import open_cache_db
from cache.sentences import SentenceVectors
from tests.assistant.answer.test_lines import SOAK

PLAN = """From: Maya Lindqvist | Date: 2026-01-07 | Subject: Re: Rootline v3 release plan
Hi Lotte,

Thanks, this matches what we discussed. Engineering can commit to the
plan with one caveat: validation needs a full 72-hour soak test on the
12 units in Priya's soak rack before we can sign off a release
candidate, so RC2 really has to go into the rack on 26 May and not a day
later. If RC2 slips, the release slips.

Priya, can you tell me by next Wednesday whether the Rev D validation
and the v3 validation clash in May?

Maya"""

KICKOFF = """From: Tomás Ferreira | Date: 2026-01-05 | Subject: Kick-off 2026: this year
Good morning everyone, and happy new year!

Our revenue target for 2026 is EUR 2.4 million (2025: EUR 1.7 million).

Practical: the new coffee machine arrives on Wednesday, and the office
is closed on Monday 27 April (King's Day) and Thursday 14 May (Ascension
Day).

Tomás"""


def record(chunk_id: int, text: str, message_id: str = "") -> ChunkRecord:
    title = text.split("Subject: ", 1)[-1].split("\n", 1)[0]
    mid = message_id or f"m{chunk_id}@x"
    return ChunkRecord(chunk_id, text, "email", title, "Priya", "2026-05-29", mid, "", "", 0, 0, "")


def _vector(embedder, text: str) -> np.ndarray:
    return embedder.embed_batch([text])[0]


def find(embedder, question, records, **kw):
    return LineFinder(embedder, kw.pop("stored", None)).find(
        question, _vector(embedder, question), records, **kw
    )


def test_the_shown_lines_are_the_best_three_of_at_most_two_mails(fake_embedder) -> None:
    question = "What did Priya notice in the RC2 soak test?"
    records = [record(1, SOAK), record(3, PLAN), record(4, KICKOFF)]
    by_id = {r.chunk_id: r for r in records}
    close = LineWeights(DEFAULT_WEIGHTS.coef, 0.0, 0.0, 0.0)  # every line near the best
    for weights in (DEFAULT_WEIGHTS, close):
        found = find(fake_embedder, question, records, weights=weights)
        shown = [*found.lines, *found.also]
        assert found.lines and len(shown) <= SHOWN
        assert all(len(e.sentence) <= QUOTE_CHARS for e in shown)
        assert found.best_line in found.text  # the scorer's first line is in the quote
        assert {e.chunk_id for e in found.lines} == {found.record.chunk_id}
        also = {mail_key(by_id[e.chunk_id]) for e in found.also}
        assert len(also) <= 1 and mail_key(found.record) not in also
        index = {c.line.text: c.index for c, _ in found.ranked}
        places = [index[e.sentence] for e in found.lines]
        assert places == sorted(places)  # in the mail's order
    assert len(shown) == SHOWN and found.also  # every line close: three, of two mails


def test_a_how_much_question_quotes_the_line_with_the_amount_and_marks_it(fake_embedder) -> None:
    text = (
        "From: Bram | Date: 2026-03-09 | Subject: Kitchen quote\n"
        "I wrote the kitchen quote in English for you.\n\nThe kitchen quote total is EUR 14,250."
    )
    question = "How much is the kitchen quote?"
    found = find(fake_embedder, question, [record(4, text)])
    assert Evidence(4, "The kitchen quote total is EUR 14,250.") in found.lines
    assert found.span == "EUR 14,250"
    assert asked_kinds(question) == {"number"}


def test_answer_spans_by_the_kind_asked() -> None:
    assert (
        answer_span("Enron paid $1.2 billion for it on October 24.", "How much did it cost?")
        == "$1.2 billion"
    )
    assert (
        answer_span("The board meets on Tuesday, October 9 at 10:30.", "When does the board meet?")
        == "October 9"
    )
    assert (
        answer_span("Greg Whalley will lead the group.", "Who leads the group?") == "Greg Whalley"
    )
    assert answer_span("Greg Whalley will lead the group.", "What is the group?") == ""


def test_no_line_over_the_bar_is_not_found_with_the_nearest_mails(fake_embedder) -> None:
    carpet = (
        "From: Ann | Date: 2026-05-02 | Subject: Lobby\n"
        "The carpet in the lobby is being replaced by the facilities team soon."
    )
    records = [record(1, carpet), record(2, carpet.replace("soon", "next month"))]
    never = LineWeights(DEFAULT_WEIGHTS.coef, -50.0, 0.5, 0.2)
    finder = LineFinder(fake_embedder)
    question = "How much does the lobby carpet cost?"
    found = finder.find(question, _vector(fake_embedder, question), records, weights=never)
    assert found.not_found and found.band == "none"
    assert [r.chunk_id for r in found.nearest] == [1, 2]
    always = LineWeights(DEFAULT_WEIGHTS.coef, 50.0, 0.5, 0.2)
    what = "What is happening to the lobby carpet?"  # asks for no kind of term
    assert finder.find(what, _vector(fake_embedder, what), records, weights=always).band == "answer"


def test_a_quote_without_the_kind_asked_is_not_found_however_high_it_scores(fake_embedder):
    """A "how much" answered by a line with no figure, "when" by one with no date: the quote
    cannot be the answer, so it is not given as one; a quote holding the kind is."""
    always = LineWeights(DEFAULT_WEIGHTS.coef, 50.0, 0.5, 0.2)
    finder = LineFinder(fake_embedder)
    carpet = "From: Ann | Date: 2026-05-02 | Subject: Lobby\nThe lobby carpet is being replaced."
    priced = "From: Ann | Date: 2026-05-02 | Subject: Lobby\nThe lobby carpet costs EUR 4,200."
    for question, text, band in [
        ("How much does the lobby carpet cost?", carpet, "none"),
        ("When is the lobby carpet replaced?", carpet, "none"),
        ("How much does the lobby carpet cost?", priced, "answer"),
    ]:
        found = finder.find(question, _vector(fake_embedder, question), [record(1, text)], always)
        assert found.band == band, question


def test_a_cost_wants_an_amount_and_a_time_of_day_a_clock_not_any_figure_or_date(fake_embedder):
    """A "how much does it cost" quoted by a line with a figure but no amount, "what time" by one
    with a date but no time of day: not found. The amount or the time in the other mail shown
    makes that mail the quote."""
    always = LineWeights(DEFAULT_WEIGHTS.coef, 50.0, 0.5, 0.2)
    finder = LineFinder(fake_embedder)
    head = "From: Ann | Date: 2026-05-02 | Subject: Lobby\n"
    sized = head + "The lobby carpet is 42 square metres, grey wool, laid in 2019."
    dated = head + "The lobby carpet is replaced on Friday 8 May."
    timed = head + "The fitters start on the lobby carpet at 7:30 am."
    for question, text, band in [
        ("How much does the lobby carpet cost?", sized, "none"),
        ("What time is the lobby carpet replaced?", dated, "none"),
        ("What time is the lobby carpet replaced?", timed, "answer"),
        ("How many square metres is the lobby carpet?", sized, "answer"),  # a count: a figure
        ("When is the lobby carpet replaced?", dated, "answer"),  # a day: a date
    ]:
        found = finder.find(question, _vector(fake_embedder, question), [record(1, text)], always)
        assert found.band == band, question
    priced = "From: Bo | Date: 2026-05-03 | Subject: Quote\nFor the lobby: EUR 4,200 laid."
    question = "How much does the lobby carpet cost?"
    records = [record(1, sized), record(2, priced)]
    found = finder.find(question, _vector(fake_embedder, question), records, always)
    if found.also_record is not None or found.record.chunk_id == 2:  # both mails shown
        assert found.record.chunk_id == 2 and found.span == "EUR 4,200"


def test_asked_forms_and_their_spans() -> None:
    assert asked_forms("How much does the lobby carpet cost?") == {"money"}
    assert asked_forms("What price did we agree?") == {"money"}
    assert asked_forms("How many people paid?") == set()  # a count, whatever it is of
    assert asked_forms("At what time does the ceremony start?") == {"clock"}
    assert asked_forms("When does the ceremony start?") == set()
    assert asked_forms("Who paid for the carpet?") == set()  # asks a name
    question = "What time is boarding?"
    assert form_spans("Boarding 06:25, gate D7 closes at 6.45 am.", question, "clock") == [
        "06:25", "6.45 am"]  # fmt: skip
    assert form_spans("Boarding on Friday 8 May.", question, "clock") == []
    assert form_spans("It is 42 m2; it costs $1,200.", "How much?", "money") == ["$1,200"]
    # a figure written as a sum is one without its currency; a bare count or a year is not
    assert form_spans("Henrik signed for 61,000 a year.", "What salary?", "money") == ["61,000"]
    assert form_spans("Serial 5171, built 1994.", "What's the asking price?", "money") == []


def test_a_low_score_is_not_found_only_where_no_line_holds_the_kind_asked(fake_embedder) -> None:
    never = LineWeights(DEFAULT_WEIGHTS.coef, -50.0, 0.5, 0.2)
    finder = LineFinder(fake_embedder)
    desks = (
        "From: Ann | Date: 2026-05-02 | Subject: Desks\nSofie Dekker signed the order for desks."
    )
    records = [record(1, desks)]
    for question, band in [
        ("Who signed the lobby carpet order?", "weak"),  # the best mail names a person
        ("When was the lobby carpet ordered?", "none"),  # it holds no date
        ("What colour is the lobby carpet?", "weak"),  # asks no kind: marked, not "not found"
    ]:
        vector = _vector(fake_embedder, question)
        assert finder.find(question, vector, records, weights=never).band == band


def test_bands_follow_the_bars() -> None:
    w = LineWeights((0.0,) * len(FEATURES), 0.0, answer=0.6, weak=0.3)
    assert [w.band(p) for p in (0.7, 0.6, 0.45, 0.3, 0.1)] == [
        "answer",
        "answer",
        "weak",
        "weak",
        "none",
    ]


def test_a_line_quoted_from_a_mail_among_the_candidates_is_counted_once(fake_embedder) -> None:
    reply = (
        "From: Maya | Date: 2026-05-30 | Subject: Re: RC2 soak\n"
        "Thanks, I will look at it.\n\n-----Original Message-----\nFrom: Priya\n"
        "Sent: Friday\nTo: Maya\nSubject: RC2 soak\n\n"
        "A healthy sensor loses less than 1% per week."
    )
    records = [record(1, reply), record(2, SOAK)]
    texts = [(c.record.chunk_id, c.line.text) for c in candidates_of(records)]
    healthy = [t for t in texts if t[1].startswith("A healthy sensor")]
    assert healthy == [(2, "A healthy sensor loses less than 1% per week.")]


def test_stored_line_vectors_give_the_same_quote_without_embedding(fake_embedder) -> None:
    stored = SentenceVectors(open_cache_db(None))
    records = [record(1, SOAK), record(3, PLAN)]
    question = "What did Priya notice in the RC2 soak test?"
    first = find(fake_embedder, question, records, stored=stored)
    assert stored.count() == 2  # one row per chunk
    calls = fake_embedder.calls
    again = find(fake_embedder, question, records, stored=stored)
    assert again.lines == first.lines and fake_embedder.calls == calls + 1  # the question only


def test_a_damaged_line_vector_row_is_computed_afresh(fake_embedder) -> None:
    db = open_cache_db(None)
    stored = SentenceVectors(db)
    question = "When is the office closed?"
    first = find(fake_embedder, question, [record(5, KICKOFF)], stored=stored)
    db.execute("UPDATE sentence_vectors SET vectors = substr(vectors, 1, 10)")
    calls = fake_embedder.calls
    again = find(fake_embedder, question, [record(5, KICKOFF)], stored=stored)
    assert again.lines == first.lines and fake_embedder.calls == calls + 2


def test_weights_round_trip_and_a_bad_file_is_none(tmp_path) -> None:
    path = tmp_path / "w.json"
    DEFAULT_WEIGHTS.save(path)
    assert LineWeights.load(path) == DEFAULT_WEIGHTS
    path.write_text("{not json")
    assert LineWeights.load(path) is None
    assert LineWeights.load(tmp_path / "missing.json") is None


@pytest.fixture(scope="module")
def embedder():
    from assistant.config import Settings
    from assistant.knowledge.embeddings import make_embedder

    return make_embedder(Settings().embedding)


@pytest.mark.slow
def test_the_answering_line_is_quoted_though_worded_unlike_the_question(embedder) -> None:
    found = find(
        embedder,
        "What did Priya notice in the RC2 soak test?",
        [record(3, SOAK), record(2, KICKOFF)],
    )
    assert found.band != "none"  # asks for no kind: at most marked, never "not found"
    assert any("dropped from 100% to 91%" in e.sentence and e.chunk_id == 3 for e in found.lines)


@pytest.mark.slow
def test_a_holiday_question_quotes_the_closed_office_line(embedder) -> None:
    records = [record(1, PLAN), record(2, KICKOFF), record(3, SOAK)]
    found = find(embedder, "Which days is the office shut this spring?", records)
    assert "27 April" in found.text and "14 May" in found.text


def test_another_mails_close_line_is_shown_too_and_a_far_one_is_not(fake_embedder) -> None:
    records = [record(1, SOAK), record(2, KICKOFF)]
    question = "What did Priya notice in the RC2 soak test?"
    close = LineWeights(DEFAULT_WEIGHTS.coef, 0.0, 0.0, 0.0)  # every line near the best
    found = LineFinder(fake_embedder).find(question, _vector(fake_embedder, question), records,
                                           weights=close)  # fmt: skip
    assert len(found.also) == 1 and found.also_record is not None
    assert found.also_record.message_id != found.record.message_id
    from assistant.answer.shape import shown

    assert "\nAlso: “" in shown(found)


def test_an_attribution_or_a_sender_stamp_is_never_the_quote(fake_embedder) -> None:
    from tests.assistant.answer.test_lines import REPLY

    for question in ("Who is Yelba Saettone?", "Who wrote to me on 03/28/2000 at 01:34 PM?"):
        found = find(fake_embedder, question, [record(1, REPLY)])
        shown = [e.sentence for e in (*found.lines, *found.also)]
        assert shown and not any("Saettone" in s or "wrote" in s for s in shown), question
        assert all("Saettone" not in c.line.text for c, _ in found.ranked)


def test_a_long_line_is_shown_where_it_answers_and_a_short_one_whole() -> None:
    trip = (
        "We rented a car in Rome, then to Siena for a night, Florence for two (too many "
        "tourists, like us, but we enjoyed it none the less), Venice for two (a great theme "
        "park), then down the Adriatic coast to a sweet little village, Sirola, on a cliff top "
        "above the sea, where we swam every morning and ate far too much grilled fish, and then "
        "back across the boot to Rome by the slow train through the hills of Umbria and Lazio."
    )
    question = "Which village on the Adriatic coast did they stay in?"
    shown = window(trip, question)
    assert len(trip) > QUOTE_CHARS >= len(shown)
    assert "Sirola" in shown and "Adriatic coast" in shown
    assert shown.startswith("…") and shown.endswith("…") and shown.strip("…") in trip
    assert window("Sirola, on a cliff top.", question) == "Sirola, on a cliff top."
    # no term of the question in it: the line's head, as the QA bank keys it
    assert window(trip, "What did the landlord sign?").startswith("We rented a car in Rome")


def test_the_qa_bank_keys_a_long_quoted_line_by_its_head_whatever_the_question(fake_embedder):
    long = "Sirola " + "on the cliff above the sea, " * 20 + "where we stayed."
    record = ChunkRecord(5, f"From: Mark | Date: 2001-07-01 | Subject: Italy\n{long}", "email",
                         "Italy", "Mark", "2001-07-01", "<m@x>", "", "", 0, 100, "h5")  # fmt: skip
    finder = LineFinder(fake_embedder)
    for question in ("Where did they stay on the cliff?", "Which village was it, Sirola?"):
        found = finder.find(question, fake_embedder.embed_batch([question])[0], [record])
        assert [line for _, line in found.evidence()] == [found.best_line]
        assert found.best_line.startswith("Sirola on the cliff") and found.best_line.endswith("…")


def test_a_why_or_a_did_i_accept_question_favours_the_line_with_the_reason_or_the_decision(
    fake_embedder,
) -> None:
    """The scorer's "kind" column holds for a line that gives a reason (for "why") or a decision
    (for "did I accept …"), not for the line that restates the question's own words; a why
    quote without such a word is still an answer (a reason needs no marker word)."""
    text = (
        "From: Sherri | Date: 2001-03-20 | Subject: Re: Conference\n"
        "Bill, many thanks for the invitation to speak at the conference.\n\n"
        "I'm already committed to be out of the country on those dates, so I'll have to decline."
    )
    records = [record(1, text)]
    candidates = candidates_of(records)
    invitation, reason = (
        next(i for i, c in enumerate(candidates) if c.line.text.startswith(head))
        for head in ("Bill, many", "I'm already")
    )
    kind = FEATURES.index("kind")
    finder = LineFinder(fake_embedder)
    for question in (
        "Why did I turn down Bill's invitation to speak at the conference?",
        "Did I accept Bill's invitation to speak at the conference?",
    ):
        x = finder.features(question, _vector(fake_embedder, question), candidates)
        assert x[reason, kind] == 1.0 and x[invitation, kind] == 0.0, question
    # the question's own word is no cue: "why did I decline" is not answered by "decline"
    declined = "Why did I decline?"
    assert not holds_cue("I have to decline.", declined, asked_cues(declined))
    assert asked_cues("When is the conference?") == set()
    assert asked_cues("Did the invoice arrive?") == set()  # yes/no, but about no decision
    always = LineWeights(DEFAULT_WEIGHTS.coef, 50.0, 0.5, 0.2)
    plain = "From: Ann | Date: 2026-05-02 | Subject: Grout\nLight grey: white goes yellow soon."
    question = "Why shouldn't the grout be white?"
    found = finder.find(question, _vector(fake_embedder, question), [record(2, plain)], always)
    assert found.band == "answer"


def test_on_a_date_is_no_place() -> None:
    """The words "on June 12" are a date, not a place: a where-question's line holds a place only
    with a place's name after its preposition."""
    question = "Where is the dinner?"
    assert "place" not in answer_kinds("It begins with a dinner on June 12.", question)
    assert "place" in answer_kinds("The dinner is at La Panetiere in Rye.", question)
    assert kind_spans("Dinner on Tuesday at Rye.", question, {"place"}) == ["at Rye"]


def test_a_street_a_web_address_or_a_where_field_is_a_place() -> None:
    """Mail writes where without a preposition too: an address, a web site, "Location: …"."""
    question = "Where is the happy hour?"
    for line in (
        "PLACE: Slainte Irish Pub (Downtown)",
        "Meet us at 509 Main Street after work.",
        "speakers - Mayor Brown location - Fire Station #6 date - Thursday",
        "Could try www.rei.com for the tent.",
    ):
        assert "place" in answer_kinds(line, question), line
    assert kind_spans("Fire Station #6, 3402 Washington Ave.", question, {"place"}) == [
        "3402 Washington Ave"
    ]
    for line in ("- Monday we go", "Total time 2695", "It is 25 miles away."):
        assert "place" not in answer_kinds(line, question), line


def test_a_name_or_a_title_asked_for_is_a_name() -> None:
    """The question "What's the name of the case study" asks for a name as "who" does: the line that
    holds a name the question does not (the title) is of the kind asked."""
    for question in (
        "What's the name of the case study Howard wants to feature us in?",
        "What is the restaurant's name?",
        "What was the title of his talk?",
    ):
        assert asked_kinds(question) == {"name"}, question
    question = "What's the name of the case study Howard wants to feature us in?"
    assert "name" in answer_kinds('Howard is preparing a case entitled "Modern Giants".', question)
    assert "name" not in answer_kinds("Howard would like to feature us in the case.", question)


def test_the_shown_prompt_is_the_chunks_of_the_lines_shown_in_retrieval_order(fake_embedder):
    """[answer] prompt_chunks = "shown": the model reads the chunks a shown line stands in (the
    quote's, the other mail's), in the order retrieval gave; "top" reads every chunk; a quote
    that found nothing reads every chunk too."""
    records = [record(4, KICKOFF), record(1, SOAK), record(3, PLAN)]
    question = "What did Priya notice in the RC2 soak test?"
    found = find(fake_embedder, question, records)
    shown_ids = {e.chunk_id for e in (*found.lines, *found.also)}
    read = prompt_records(records, found, "shown")
    assert {r.chunk_id for r in read} == shown_ids and len(read) < len(records)
    assert [r.chunk_id for r in read] == [r.chunk_id for r in records if r.chunk_id in shown_ids]
    assert prompt_records(records, found, "top") == records
    nothing = find(fake_embedder, question, [])
    assert prompt_records(records, nothing, "shown") == records


def test_a_quote_with_only_a_loose_term_of_the_kind_takes_its_mails_whole_one() -> None:
    """A "when" quote whose lines hold only a weekday or "noon" (evidence_lines' dev-new n17: the
    lot's Monday hours stood in a line of the same mail below the three shown) shows the best
    line of its mail with a whole date or time span in place of its weakest line; a quote
    with a whole one, or with none at all ("not found" by its kind), is left as it is."""
    text = (
        "From: Race desk | Date: 2001-04-19 | Subject: MS150 parking\n"
        "Tully Stadium will close on Saturday at noon.\n\nThe lot is guarded all weekend.\n\n"
        "Riders park at Tully Stadium.\n\nMonday, April 23 - 6:30 a.m. to noon."
    )
    question = "Until what time is the Tully Stadium lot open on Monday?"
    candidates = candidates_of([record(5, text)])
    assert [c.line.text for c in candidates][-1] == "Monday, April 23 - 6:30 a.m. to noon."
    ranked = [(c, p) for c, p in zip(candidates, (0.9, 0.5, 0.8, 0.1), strict=True)]
    quote = sorted([c for c, _ in ranked[:3]], key=lambda c: c.index)
    shown = [c.line.text for c in whole_kind_shown(question, ranked, quote, [])]
    assert shown == [
        "Tully Stadium will close on Saturday at noon.",
        "Riders park at Tully Stadium.",
        "Monday, April 23 - 6:30 a.m. to noon.",
    ]  # the weakest line (0.5) gave way
    whole = [candidates[3], candidates[0]]
    assert whole_kind_shown(question, ranked, whole, []) == whole
    none = [candidates[1], candidates[2]]  # no term of the kind: not found stays not found
    assert whole_kind_shown(question, ranked, none, []) == none


@pytest.mark.parametrize(
    "question",
    [
        "What's the deadline for the EBS/IBM ASP agreement that Rex Shelby's team works toward?",
        "What is the due date of the Q3 report?",
        "What's the closing date for the Tully Stadium lot?",
    ],
)
def test_a_deadline_or_a_due_date_asks_for_a_date(question) -> None:
    """ "What's the deadline …" asked for no kind (dev s21): its quote, the meeting's Monday,
    was shown over the mail's own "March 31" line."""
    assert asked_kinds(question) == {"date"}
