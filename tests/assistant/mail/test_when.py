"""A date in a question's words filters by when the mail was sent only where the question asks
about sending; a date that names or belongs to a thing is a topic (issue 48)."""

from __future__ import annotations

from datetime import date

import pytest

from assistant.mail.date_words import in_words
from assistant.mail.when import of_sending

TODAY = date(2001, 11, 20)


@pytest.mark.parametrize(
    "question",
    [
        "What did Steve say in last week's note?",
        "In October he wrote about the fund; what did he say?",
        "What did I get in October about preserving documents?",
        "What newsletter came in last Friday?",
        "What did Dottie Kerr send on Halloween about social enterprise?",
        "What was Jim Dent's mail on October 26 about?",
        "What was the mail from March about?",
        "emails to Greg in October",
        "anything since Monday?",
        "What did David Aronoff write in August after hearing the news?",
        "Earlier this month, what was the FBI warning about?",
        "What did I ask Hooker for this week?",
        "What did he ask for last week?",
        "What did I tell the Sackreiters last weekend?",
        "What came in over the weekend?",
        "What did Sherri send yesterday morning?",  # a time of day is no noun the date names
        "What came in last Friday night?",
        "What did Greg write on Monday afternoon about the deal?",
        "What did the March 5 Derrick email say?",  # a mail noun after the names
    ],
)
def test_a_date_of_sending_filters(question):
    found = in_words(question, TODAY)
    assert found is not None and of_sending(question, found)


@pytest.mark.parametrize(
    "question",
    [
        "What are the Christmas plans?",
        "What did Liz send about the Christmas dates?",
        "Who's coming to the March 15 meeting?",
        "What did Rob say about Christmas?",
        "What are we doing for Christmas?",
        "Where is the company conference in June that they want me to speak at?",
        "Who came to the November 2000 CEO conference?",
        "What did Liz say about the Christmas party on December 15?",
        "In April 2001, how long did the MS150 take?",
        "What did Bob say about the plans for this week?",
        "What is the agenda for this week?",
        "What did Rob say about last weekend's ride?",
        "Who is driving to the lake house on the weekend?",
        "What did he say about the Christmas morning service?",  # the noun after the time
        # after "the", names between the date and the noun modify the noun
        "In my reply to Dot about the April 12 Derrick meeting, who did I ask to cover it?",
        "What did Lou say about the May 3 Northern Natural Gas hearing?",
    ],
)
def test_a_date_of_a_thing_is_a_topic(question):
    found = in_words(question, TODAY)
    assert found is not None and not of_sending(question, found)
