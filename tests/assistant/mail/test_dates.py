"""Dates in words and in `date:` terms, against pinned todays: month, year and leap edges."""

from __future__ import annotations

from datetime import date

import pytest

from assistant.mail.date_words import in_words
from assistant.mail.dates import DateError, term

TUE = date(2001, 11, 20)  # the Skilling sets' today, a Tuesday


def words(question: str, today: date) -> str | None:
    found = in_words(question, today)
    return str(found.range) if found else None


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("what came yesterday", "2001-11-19"),
        ("anything today?", "2001-11-20"),
        ("what did Vince send last week", "2001-11-12..2001-11-18"),
        ("this week", "2001-11-19..2001-11-20"),
        ("since Monday", "2001-11-19..2001-11-20"),
        ("last Friday", "2001-11-16"),
        ("on Tuesday", "2001-11-20"),
        ("last Tuesday", "2001-11-13"),
        ("in October", "2001-10-01..2001-10-31"),
        ("in December", "2000-12-01..2000-12-31"),  # not come yet this year: last year's
        ("emails to Greg in November 2001", "2001-11-01..2001-11-30"),
        ("on October 31 about", "2001-10-31"),
        ("on September 20, 2000", "2000-09-20"),
        ("on 5 March", "2001-03-05"),
        ("the week of October 22", "2001-10-22..2001-10-28"),
        ("earlier this month", "2001-11-01..2001-11-20"),
        ("last month", "2001-10-01..2001-10-31"),
        ("last year", "2000-01-01..2000-12-31"),
        ("on Halloween", "2001-10-31"),
        ("two weeks ago", "2001-11-05..2001-11-11"),
        ("the past 3 days", "2001-11-18..2001-11-20"),
        ("since October", "2001-10-01..2001-11-20"),
        ("before 2001-05-03", "..2001-05-02"),
        ("in 2000", "2000-01-01..2000-12-31"),
        ("what did Sherri say about the board meeting", None),
        ("you may go", None),  # the verb, not the month
        ("the Saturday training ride", None),  # a bare weekday names a kind of ride
        ("this Monday", "2001-11-19"),
        ("by Friday", "2001-11-16"),
    ],
)
def test_words_on_a_tuesday(question, expected):
    assert words(question, TUE) == expected


def test_january_first_looks_back_into_last_year():
    today = date(2002, 1, 1)  # a Tuesday
    assert words("yesterday", today) == "2001-12-31"
    assert words("last week", today) == "2001-12-24..2001-12-30"  # across the year boundary
    assert words("this week", today) == "2001-12-31..2002-01-01"
    assert words("last month", today) == "2001-12-01..2001-12-31"
    assert words("in December", today) == "2001-12-01..2001-12-31"
    assert words("in January", today) == "2002-01-01..2002-01-31"
    assert words("on December 31", today) == "2001-12-31"
    assert words("this year", today) == "2002-01-01"  # one day so far


def test_december_thirty_first():
    today = date(2001, 12, 31)  # a Monday
    assert words("yesterday", today) == "2001-12-30"
    assert words("last week", today) == "2001-12-24..2001-12-30"
    assert words("this month", today) == "2001-12-01..2001-12-31"
    assert words("in January", today) == "2001-01-01..2001-01-31"
    assert words("last Monday", today) == "2001-12-24"
    assert words("since Monday", today) == "2001-12-31"


def test_leap_day():
    assert words("yesterday", date(2004, 3, 1)) == "2004-02-29"
    assert words("last month", date(2004, 3, 1)) == "2004-02-01..2004-02-29"
    assert words("on February 29", date(2004, 3, 10)) == "2004-02-29"
    assert words("in February", date(2005, 3, 1)) == "2005-02-01..2005-02-28"
    assert words("on February 29", date(2005, 3, 1)) is None  # no such day this year or last
    assert str(term("2004-02", date(2005, 1, 1))) == "2004-02-01..2004-02-29"
    assert str(term("2004-02-29", date(2005, 1, 1))) == "2004-02-29"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2001-10-05", "2001-10-05"),
        ("2001-10", "2001-10-01..2001-10-31"),
        ("2001", "2001-01-01..2001-12-31"),
        ("2001-10..2001-12", "2001-10-01..2001-12-31"),
        ("2001-10..", "2001-10-01.."),
        ("..2001-03", "..2001-03-31"),
        ("yesterday", "2001-11-19"),
        ("last-week", "2001-11-12..2001-11-18"),
        ("this-month", "2001-11-01..2001-11-20"),
        ("last-month", "2001-10-01..2001-10-31"),
        ("friday", "2001-11-16"),
        ("7d", "2001-11-14..2001-11-20"),  # 7 days with today, as "the past 7 days"
        ("1d", "2001-11-20"),
    ],
)
def test_date_terms(value, expected):
    assert str(term(value, TUE)) == expected


@pytest.mark.parametrize("value", ["2001-02-29", "2001-13", "soon", "10/05/2001"])
def test_a_bad_date_term_says_what_is_understood(value):
    with pytest.raises(DateError, match=f"date:{value}"):
        term(value, TUE)


@pytest.mark.parametrize(
    ("value", "said"),
    [("2001-12..2001-10", "starts after it ends; did you mean 2001-10..2001-12"),
     ("3000y", "further back than dates go"), ("999999d", "further back")],
)  # fmt: skip
def test_a_reversed_range_or_a_span_past_the_calendar_is_said(value, said):
    """A range the wrong way round found nothing and said nothing; 3000y was an OverflowError."""
    with pytest.raises(DateError, match=said):
        term(value, TUE)


def test_bounds_are_iso_strings_end_excluded():
    assert term("2001-12", TUE).bounds() == ("2001-12-01", "2002-01-01")
    assert term("..2001-12-31", TUE).bounds() == (None, "2002-01-01")


@pytest.mark.parametrize(
    "question",
    [
        "what did I get in the past 10000 years",
        "what did he send 5000 years ago",
        "what did he send 30000 months ago",
        "what did he send 99999999 days ago",
    ],
)
def test_a_span_in_words_past_the_calendar_is_no_date(question):
    """A count of days, months or years the calendar cannot go back (a slip of the keys) ended
    the question with an OverflowError or ValueError; it is no date, and the words rank."""
    assert in_words(question, TUE) is None


@pytest.mark.parametrize(
    ("question", "expected", "said"),
    [
        ("what did Vince send the day before yesterday", "2001-11-18", "the day before yesterday"),
        ("what did Vince send the day after Christmas", "2000-12-26", "the day after Christmas"),
        ("what did she write the day before Halloween", "2001-10-30", "the day before Halloween"),
        ("mail from the day after Oct 31, 2000", "2000-11-01", "the day after Oct 31, 2000"),
        ("what came the day after last Friday", "2001-11-17", "the day after last Friday"),
    ],
)
def test_the_day_before_or_after_a_date_is_that_one_day(question, expected, said):
    """ "the day before yesterday" was read as "before yesterday" (all mail up to 2001-11-18),
    "the day after Christmas" as "after Christmas" (2000-12-26 up to today)."""
    found = in_words(question, TUE)
    assert (str(found.range), found.words) == (expected, said)
    assert question[found.start : found.end] == said


@pytest.mark.parametrize(
    ("question", "expected", "said"),
    [
        (
            "what did Vince send between October 1 and October 15",
            "2001-10-01..2001-10-15",
            "between October 1 and October 15",
        ),
        (
            "what did Vince send from October 1 to October 15?",
            "2001-10-01..2001-10-15",
            "from October 1 to October 15",
        ),
        (
            "mail October 1 through October 15",
            "2001-10-01..2001-10-15",
            "October 1 through October 15",
        ),
        ("mail from October 1-15", "2001-10-01..2001-10-15", "October 1-15"),
        ("mail from Oct 1 to 15, 2000", "2000-10-01..2000-10-15", "Oct 1 to 15, 2000"),
        (  # the first month has no year: the latest one not after the second
            "what did Vince send from October to December 2000",
            "2000-10-01..2000-12-31",
            "from October to December 2000",
        ),
        (
            "mail between September and October",
            "2001-09-01..2001-10-31",
            "between September and October",
        ),
        (
            "what came from Monday to Wednesday",
            "2001-11-12..2001-11-14",
            "from Monday to Wednesday",
        ),
        (
            "what came between two weeks ago and yesterday",
            "2001-11-05..2001-11-19",
            "between two weeks ago and yesterday",
        ),
        (
            "mail between 2001-10-01 and 2001-10-05",
            "2001-10-01..2001-10-05",
            "between 2001-10-01 and 2001-10-05",
        ),
    ],
)
def test_a_range_of_two_dates_runs_from_the_first_to_the_second(question, expected, said):
    """ "between October 1 and October 15" filtered October 1 alone, "from October to December
    2000" December 2000 alone; "October 1-15" and "between September and October" no date."""
    found = in_words(question, TUE)
    assert found is not None
    assert (str(found.range), found.words) == (expected, said)
    assert question[found.start : found.end] == said


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("what did he send on Monday and Friday", "2001-11-19"),  # two days, no range
        ("what did I send on October 5 to Greg", "2001-10-05"),
        ("what came from yesterday to last week", "2001-11-19"),  # the wrong way round
    ],
)
def test_two_dates_that_make_no_range_stay_one_date(question, expected):
    assert words(question, TUE) == expected


@pytest.mark.parametrize(
    ("question", "today", "expected"),
    [
        (
            "What did I tell the Sackreiters last weekend?",
            date(2001, 4, 5),
            "2001-03-31..2001-04-01",
        ),
        ("what came in over the weekend", date(2001, 11, 19), "2001-11-17..2001-11-18"),
        ("what did Sherri send this weekend", TUE, "2001-11-17..2001-11-18"),  # the one just gone
        ("what did Sherri send this weekend", date(2001, 11, 17), "2001-11-17"),  # so far
        ("what did Sherri send last weekend", date(2001, 11, 18), "2001-11-10..2001-11-11"),
        ("anything since last weekend?", TUE, "2001-11-17..2001-11-20"),
        ("what did he send on the weekend", date(2002, 1, 1), "2001-12-29..2001-12-30"),
        ("mail from the past weekend", TUE, "2001-11-17..2001-11-18"),
    ],
)
def test_a_weekend_is_its_saturday_and_sunday(question, today, expected):
    """ "last weekend" and "over the weekend" read no date: the question searched all the mail."""
    assert words(question, today) == expected


def test_weekend_terms():
    assert str(term("last-weekend", TUE)) == "2001-11-17..2001-11-18"
    assert str(term("this-weekend", date(2001, 11, 18))) == "2001-11-17..2001-11-18"


@pytest.mark.parametrize(
    ("question", "today", "expected"),
    [
        ("what came in the past week", TUE, "2001-11-14..2001-11-20"),
        ("mail of the past seven days", TUE, "2001-11-14..2001-11-20"),
        ("what did she send twelve days ago", TUE, "2001-11-08"),
        ("what did he send last October", TUE, "2001-10-01..2001-10-31"),
        ("what did he send last November", TUE, "2000-11-01..2000-11-30"),  # a year ago
    ],
)
def test_the_past_week_counts_in_words_and_last_month_named(question, today, expected):
    """ "the past week", a count in words over six ("seven days") and "last October" read no
    date: the question searched all the mail."""
    assert words(question, today) == expected
