"""Follow-up rules: what leans on the last turn, and the standalone question made from it."""

from __future__ import annotations

from assistant.mail.followup import Conversation, Turn, leaning, rewrite

SOURCES = [
    {"sender": "Mark Golden <mark.golden@dowjones.com>", "thread": "t-golden", "chunk_id": 1},
    {"sender": "sherri.sera@enron.com", "thread": "t-other", "chunk_id": 2},
]
LAST = Turn(
    "What did Mark Golden at Dow Jones ask me for?",
    "What did Mark Golden at Dow Jones ask me for?",
    "“Could you call me about the story?” — Mark Golden · 2001-10-24",
    SOURCES,
)


def test_a_question_that_stands_alone_is_left_as_it_is():
    question = "When is the Harvard Club town meeting in November?"
    assert leaning(question) == []
    assert rewrite(question, LAST).standalone == question
    assert not rewrite("and when?", None).changed  # nothing to lean on


def test_he_becomes_the_last_questions_person_and_its_words_are_carried():
    rw = rewrite("What explanations did he float?", LAST)
    assert rw.standalone == "What explanations did Mark Golden float? (about: Dow Jones)"
    assert rw.focus == ("t-golden",)  # the first source's thread is looked in first
    assert "he/she → Mark Golden" in rw.because


def test_his_and_her_become_possessives():
    assert rewrite("What is his phone number?", LAST).standalone.startswith(
        "What is Mark Golden's phone number?"
    )
    assert rewrite("Did we call her back?", LAST).standalone.startswith(
        "Did we call Mark Golden back"
    )


def test_the_person_is_the_first_sources_sender_when_the_question_names_nobody():
    last = Turn("Who asked about the merger story?", "Who asked about the merger story?", "",
                [{"sender": "laura.goldberg@chron.com", "thread": "t1"}])  # fmt: skip
    assert rewrite("What did she want?", last).standalone.startswith(
        "What did Laura Goldberg want?"
    )


def test_it_that_and_short_questions_carry_the_last_questions_key_words():
    last = Turn("Where is the HEF launch party?", "Where is the HEF launch party?", "", SOURCES)
    assert rewrite("How do I RSVP for it?", last).standalone == (
        "How do I RSVP for it? (about: HEF launch party)"
    )
    assert rewrite("and when?", last).standalone == "and when? (about: HEF launch party)"
    assert "that" in leaning("Which partnerships is that about?")
    assert "that" not in leaning("Which mail says that Enron buys it?")
    assert leaning("How long is the ride?") == ["few words of its own"]


def test_a_third_turn_keeps_what_the_second_carried():
    talk = Conversation()
    first = Turn("Where is the HEF launch party?", "Where is the HEF launch party?", "", SOURCES)
    talk.add(first)
    second = talk.rewrite("How do I RSVP for it?")
    talk.add(Turn(second.asked, second.standalone, "", SOURCES))
    third = talk.rewrite("And by when?")
    assert third.standalone.endswith("(about: RSVP HEF launch party)")


def test_a_name_with_accents_is_the_person_and_carried_whole():
    """Åsa, Tomás: a capitalised word of any letters is a name ([A-Z] read Åsa as 'sa')."""
    sources = [{"sender": "Tomás Ferreira <tomas@fernwoodlabs.nl>", "thread": "t-budget"}]
    last = Turn("Did Åsa and Tomás agree on the budget?", "Did Åsa and Tomás agree on the budget?",
                "", sources)  # fmt: skip
    rw = rewrite("What did he say?", last)
    assert rw.standalone == "What did Tomás say? (about: Åsa agree budget)"
