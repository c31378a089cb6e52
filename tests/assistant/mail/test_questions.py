"""Filters read from a question's words, by rules, against the senders the store has."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("question", "shown"),
    [
        (
            "what did Vince send last week",
            "from: Vince Kaminski <vince.kaminski@enron.com> · date: 2001-11-12..2001-11-18",
        ),
        (
            "the mail from Sherri about the board meeting",
            "from: Sherri Sera <sherri.sera@enron.com>",
        ),
        (
            "What did Klaus Schwab write about the annual meeting?",
            "from: Klaus Schwab <president@weforum.org>",
        ),
        (  # the one Greg who gets mail (Greg Whalley only sends)
            "emails to Greg in October",
            "to: Greg Grissom <greg.grissom@enron.com> · date: 2001-10-01..2001-10-31",
        ),
        (
            "What did Sherri tell Greg Grissom about tickets?",
            "from: Sherri Sera <sherri.sera@enron.com> · to: Greg Grissom <greg.grissom@enron.com>",
        ),
        ("what was in the 'Dabhol power' thread", "subject: Dabhol power"),
        ("anything since Monday?", "date: 2001-11-19..2001-11-20"),
        ("what did I reply to Vince about Dabhol", "to: Vince Kaminski <vince.kaminski@enron.com>"),
    ],
)
def test_filters_from_words(mailbox, question, shown):
    _, _, reader = mailbox
    assert reader.read(question).filters.describe() == shown


@pytest.mark.parametrize(
    "question",
    ["what did I send about the 'no such subject' matter", "What did the board decide?"],
)
def test_no_name_no_subject_no_date_is_no_filter(mailbox, question):
    _, _, reader = mailbox
    assert not reader.read(question).filters


@pytest.mark.parametrize(
    ("question", "shown"),
    [  # a sender the words name that no one in the mail is: said, and ranked by the words
        (
            "what did Bram send about the kitchen",
            "from: Bram (no one of that name: ranks, does not filter)",
        ),
        (
            "the mail from Enron about the board",
            "from: Enron (no one of that name: ranks, does not filter)",
        ),
    ],
)
def test_a_name_no_one_has_ranks_and_says_so(mailbox, question, shown):
    _, _, reader = mailbox
    filters = reader.read(question).filters
    assert not filters.narrows() and filters.describe() == shown


@pytest.mark.parametrize(
    ("question", "shown"),
    [  # a date of what the mail is about is no filter: such mail is written before or after
        ("Where is the company conference in June that they want me to speak at?", ""),
        ("Who came to the November 2000 CEO conference?", ""),
        ("How long is the Saturday training ride?", ""),  # a bare weekday is no date
        ("What was sent about the conference in June?", ""),  # June is the conference's
        ("What was sent in October about the tickets?", "date: 2001-10-01..2001-10-31"),
        ("What did I hear last week about the Betas?", "date: 2001-11-12..2001-11-18"),
        (  # no mail came that day: the date ranks instead of leaving nothing
            "What newsletter came in last Friday?",
            "date: 2001-11-16 (no mail then: ranks, does not filter)",
        ),
    ],
)
def test_a_date_filters_the_mail_only_where_the_question_speaks_of_the_mail(
    mailbox, question, shown
):
    _, _, reader = mailbox
    assert reader.read(question).filters.describe() == shown


@pytest.mark.parametrize(
    ("question", "ranked_by"),
    [  # a person a filter narrows to: every mail it leaves is theirs, so their name ranks only
        # the mail whose text also names them (a signature, a quoted header) and goes
        ("what did Vince send last week about Dabhol", "what did send last week about Dabhol"),
        ("What did Sherri tell Greg Grissom about tickets?", "What did tell about tickets?"),
        ("what did I reply to Vince about Dabhol", "what did I reply to about Dabhol"),
        # a name that ranks (no one has it) narrows nothing: its words stay
        ("what did Bram send about the kitchen", "what did Bram send about the kitchen"),
        ("what was sent in October about tickets", "what was sent in October about tickets"),
        ("what was in the 'Dabhol power'  thread\n", "what was in the 'Dabhol power'  thread\n"),
    ],
)
def test_the_words_a_person_filter_stands_for_do_not_rank(mailbox, question, ranked_by):
    _, _, reader = mailbox
    assert reader.read(question).text == ranked_by
    assert reader.read(question).filters.source == "words"


def test_terms_win_over_words_and_modes_turn_reading_off(mailbox):
    store, _, reader = mailbox
    assert reader.read("from:sherri last week").filters.describe() == "from: sherri"
    from assistant.mail.reader import QueryReader

    terms_only = QueryReader(store, reader.today, "terms")
    assert not terms_only.read("what did Vince send last week").filters
    assert terms_only.read("from:vince").filters
    assert not QueryReader(store, reader.today, "off").read("from:vince").filters
