"""Dates in a question's words ("last Friday", "in October", "between October 1 and 15"), read
by rules (never by the model) as a range of days (mail/dates.py) against a `today`.

The first date expression of a question is read; a date that is one end of a range ("from
October to December 2000") is read with the other end."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta

from assistant.mail.dates import (
    HOLIDAYS,
    MONTHS,
    WEEKDAYS,
    DateRange,
    day,
    latest_month,
    latest_weekday,
    month,
    relative,
    week_of,
    year,
)

_MONTH = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_WEEKDAY = r"(?P<weekday>" + "|".join(sorted(WEEKDAYS, key=len, reverse=True)) + r")"
_DAYNUM = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_HOLIDAY = r"(?P<holiday>" + "|".join(re.escape(h) for h in HOLIDAYS) + r")"
_UNIT = r"(?P<unit>day|week|month|year)s?"


@dataclass(frozen=True)
class Found:
    """A date range read from a question, and the words it was read from."""

    range: DateRange
    words: str
    start: int = 0  # where in the question the words stand
    end: int = 0


def in_words(question: str, today: date) -> Found | None:
    """The first date expression of `question` (rules tried most specific first), or None.
    A leading "since" or "after" opens the end to today, "before" or "until" the start.
    A count the calendar cannot hold ("10000 years ago") is no date."""
    for pattern, build in _RULES:
        for match in pattern.finditer(question):
            found = _built(match, build, today)
            joined = found and _joined(question, match, found, today)
            if joined:
                return joined
            if found is not None:
                start, span = _day_next_to(question, match, found)
                if start is None:
                    start, span = match.start(), _open_ended(question, match, found, today)
                return Found(span, question[start : match.end()].strip(), start, match.end())
    return None


def _built(match: re.Match, build, today: date) -> DateRange | None:
    if _bare_may(match):
        return None
    try:
        return build(match.groupdict(), today)
    except (OverflowError, ValueError):
        return None


_JOIN = r"(?:\s*[-–]\s*|\s+(?:(?P<both>and)|to|through|thru|until|till)\s+)"
_JOIN_AFTER = re.compile(_JOIN, re.IGNORECASE)
_JOIN_BEFORE = re.compile(_JOIN + "$", re.IGNORECASE)
_LEAD = re.compile(r"(?<![\w-])(?P<lead>between|from)\s+$", re.IGNORECASE)
_WORD_START = re.compile(r"(?<![\w-])\w")
Side = tuple[re.Match, Callable, DateRange]  # a date's words, how it is built, its days


def _joined(question: str, match: re.Match, found: DateRange, today: date) -> Found | None:
    """ "between X and Y", "from X to Y", "X through Y", "X - Y": X's start to Y's end, the
    date read (`match`) being X or Y. X named without a year ("from October to December 2000")
    is the latest one not after Y. None where the words beside it make no range."""
    read = (match, next(b for p, b in _RULES if p is match.re), found)
    join = _JOIN_AFTER.match(question, match.end())
    left, right = read, _at(question, join.end(), today) if join else None
    if right is None:
        join, right = _JOIN_BEFORE.search(question, 0, match.start()), read
        left = _ending_at(question, join.start(), today) if join else None
    if left is None or left[2].start is None or right[2].end is None:
        return None
    (left_match, left_build, span), end = left, right[2].end
    if span.start > end and not left_match.groupdict().get("year") and not _relative(left_match):
        span = _built(left_match, left_build, end) or span  # the latest one not after Y
    lead = _LEAD.search(question, 0, left_match.start())
    said = (lead.group("lead") if lead else left_match.group(0).split()[0]).lower()
    if span.start > end or (join.group("both") and said != "between"):
        return None
    start, stop = lead.start() if lead else left_match.start(), right[0].end()
    return Found(DateRange(span.start, end), question[start:stop], start, stop)


def _ending_at(question: str, pos: int, today: date) -> Side | None:
    """The date whose words end at `pos` (starting at one of the six words before it)."""
    starts = [m.start() for m in _WORD_START.finditer(question, 0, pos)]
    sides = (_at(question, at, today) for at in reversed(starts[-6:]))
    return next((side for side in sides if side and side[0].end() == pos), None)


def _relative(match: re.Match) -> bool:
    """Words that count from today ("yesterday", "last Friday", "two weeks ago")."""
    g = match.groupdict()
    return not (g.get("month") or g.get("holiday") or g.get("weekday")) or bool(g.get("last"))


def _at(question: str, pos: int, today: date) -> Side | None:
    """The date whose words start at `pos`; beside another, a month or weekday alone is one."""
    for pattern, build in [*_RULES, *_BARE]:
        match = pattern.match(question, pos)
        found = _built(match, build, today) if match else None
        if found is not None:
            return match, build, found
    return None


_DAY_NEXT = re.compile(r"(?<![\w-])(?:the )?day (?P<side>before|after) $", re.IGNORECASE)


def _day_next_to(question: str, match: re.Match, found: DateRange) -> tuple[int | None, DateRange]:
    """ "the day before X": the day before X starts; "the day after X": the day after it ends
    (not "before X", all mail up to it); (where the words start, the day), or (None, found)."""
    near = _DAY_NEXT.search(question, 0, match.start())
    before = bool(near) and near.group("side").lower() == "before"
    edge = found.start if before else found.end
    if near is None or edge is None:
        return None, found
    return near.start(), day(edge + timedelta(days=-1 if before else 1))


def _bare_may(match: re.Match) -> bool:
    """ "may" in lower case is the verb, not the month."""
    return (match.groupdict().get("month") or "") == "may"


def _open_ended(question: str, match: re.Match, found: DateRange, today: date) -> DateRange:
    """ "since X" runs from X to today (not past it: a pinned today has later mail), "after X"
    from the day after; "before X" up to the day before, "until X" up to X's end."""
    before = question[: match.start()].lower().rstrip()
    if before.endswith("since") or match.group(0).lower().startswith("since"):
        return DateRange(found.start, today)
    if before.endswith("after") or match.group(0).lower().startswith("after"):
        return DateRange(found.end + timedelta(days=1) if found.end else None, today)
    if before.endswith("before") or match.group(0).lower().startswith("before"):
        return DateRange(None, found.start - timedelta(days=1) if found.start else None)
    if before.endswith(("until", "till")) or match.group(0).lower().startswith("until"):
        return DateRange(None, found.end)
    return found


def _on_date(g: dict, today: date) -> DateRange | None:
    number, d = MONTHS[g["month"].lower()], int(g["day"])
    y = int(g["year"]) if g.get("year") else None
    if y is None:
        y = today.year if (number, d) <= (today.month, today.day) else today.year - 1
    try:
        return day(date(y, number, d))
    except ValueError:
        return None


def _week_of(g: dict, today: date) -> DateRange | None:
    found = _on_date(g, today)
    return week_of(found.start) if found else None


def _month_named(g: dict, today: date) -> DateRange:
    number = MONTHS[g["month"].lower()]
    if g.get("year"):
        return month(int(g["year"]), number)
    if g.get("last") and number == today.month:  # "last October" asked in October: a year ago
        return month(today.year - 1, number)
    return latest_month(number, today)


def _holiday(g: dict, today: date) -> DateRange | None:
    m, d = HOLIDAYS[g["holiday"].lower()]
    return _on_date({"month": _month_name(m), "day": d, "year": g.get("year")}, today)


def _month_name(number: int) -> str:
    return next(name for name, i in MONTHS.items() if i == number)


def _weekday(g: dict, today: date) -> DateRange:
    strictly = bool(g.get("last"))
    return day(latest_weekday(WEEKDAYS[g["weekday"].lower()], today, strictly))


def _ago_words(g: dict, today: date) -> DateRange:
    n = _count(g["n"])
    unit = g["unit"].lower()
    if unit == "day":
        return day(today - timedelta(days=n))
    if unit == "week":
        return week_of(today - timedelta(days=7 * n))
    if unit == "month":
        y, m = divmod(today.year * 12 + today.month - 1 - n, 12)
        return month(y, m + 1)
    return year(today.year - n)


def _past(g: dict, today: date) -> DateRange:
    n = _count(g["n"])
    days = {"day": 1, "week": 7, "month": 30, "year": 365}[g["unit"].lower()] * n
    return DateRange(today - timedelta(days=days - 1), today)


_NUMBERS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
            "fifteen": 15, "twenty": 20, "thirty": 30}  # fmt: skip


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS[word.lower()]


def _words(g: dict, today: date) -> DateRange | None:
    phrase = g["phrase"].lower()
    if phrase.startswith("earlier this"):
        phrase = phrase.removeprefix("earlier ")
    if phrase.endswith("the weekend") or phrase == "past weekend":  # the latest one
        phrase = "this weekend"
    return relative(phrase, today)


def _year(g: dict) -> DateRange:
    return year(int(g["year"]))


def _iso_day(g: dict, today: date) -> DateRange | None:
    try:
        return day(date.fromisoformat(g["iso"]))
    except ValueError:
        return None


def _rule(pattern: str) -> re.Pattern:
    return re.compile(r"(?<![\w-])" + pattern + r"(?![\w-])", re.IGNORECASE)


def _days_of(g: dict, today: date) -> DateRange | None:
    """ "October 1-15": the 1st to the 15th of the latest October 15; "and" after "between"."""
    last = _on_date({**g, "day": g["day2"]}, today)
    first = last.start.replace(day=int(g["day"])) if last else None
    if first is None or first > last.start or (g["both"] and not g["between"]):
        return None
    return DateRange(first, last.end)


_N = r"(?P<n>\d+|" + "|".join(_NUMBERS) + ")"
_RULES = [
    (_rule(r"(?P<iso>\d{4}-\d\d-\d\d)"), _iso_day),
    (
        _rule(
            rf"(?:(?P<between>between) )?{_MONTH} {_DAYNUM}{_JOIN}(?P<day2>\d{{1,2}})"
            rf"(?:st|nd|rd|th)?(?:,? {_YEAR})?"
        ),
        _days_of,
    ),
    (_rule(r"the week of " + _MONTH + r" " + _DAYNUM + r"(?:,? " + _YEAR + r")?"), _week_of),
    (_rule(_MONTH + r" " + _DAYNUM + r"(?:,? " + _YEAR + r")?"), _on_date),
    (_rule(_DAYNUM + r" (?:of )?" + _MONTH + r"(?:,? " + _YEAR + r")?"), _on_date),
    (_rule(_HOLIDAY + r"(?: " + _YEAR + r")?"), _holiday),
    (_rule(_MONTH + r",? " + _YEAR), _month_named),
    (
        _rule(r"(?:in|during|of|from|since|after|before|until|through|between) " + _MONTH),
        _month_named,
    ),
    (_rule(r"(?P<last>last) " + _MONTH), _month_named),  # "last October": the latest gone
    (_rule(r"(?:in|during|of|since|after|before|until) " + _YEAR), lambda g, t: _year(g)),
    (_rule(_N + r" " + _UNIT + r" ago"), _ago_words),
    (_rule(r"(?:the )?(?:past|last) " + _N + r" " + _UNIT), _past),
    (_rule(r"the past (?P<unit>week|month|year)"), lambda g, t: _past({**g, "n": "1"}, t)),
    (
        _rule(
            r"(?P<phrase>yesterday|today|(?:earlier )?this (?:week|month|year)"
            r"|last (?:week|month|year)|(?:this|last|past) weekend|(?:over|on|at) the weekend)"
        ),
        _words,
    ),
    # a weekday is a date after a word that makes it one ("on Monday", "last Friday", "since
    # Tuesday"); bare, it names a kind of thing ("the Saturday training ride")
    (_rule(r"(?:(?P<last>last )|(?:on|this|since|after|before|until|by) )" + _WEEKDAY), _weekday),
    (_rule(r"(?:between|from) " + _WEEKDAY + rf"(?={_JOIN})"), _weekday),  # "from Monday to"
]
_BARE = [(_rule(_MONTH), _month_named), (_rule(_WEEKDAY), _weekday)]  # in a range ("to May")
