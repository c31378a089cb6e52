"""Dates in words and in query terms, computed in code against a `today` (never by the model).

Every expression becomes an inclusive range of calendar days, `DateRange(start, end)`; either end
may be open. Weeks run Monday to Sunday, as ISO 8601 counts them. A month or weekday named
without a year is the latest one not after today ("in December" asked in November 2001 is
December 2000; "last Friday" asked on a Friday is the Friday before).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

MONTHS = {
    name: i
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
WEEKDAYS = {
    name: i
    for i, names in enumerate(
        [
            ("monday", "mon"),
            ("tuesday", "tue", "tues"),
            ("wednesday", "wed"),
            ("thursday", "thu", "thurs"),
            ("friday", "fri"),
            ("saturday", "sat"),
            ("sunday", "sun"),
        ]
    )
    for name in names
}
HOLIDAYS = {  # fixed-date days people name instead of the date
    "new year's day": (1, 1),
    "valentine's day": (2, 14),
    "independence day": (7, 4),
    "halloween": (10, 31),
    "christmas eve": (12, 24),
    "christmas": (12, 25),
    "new year's eve": (12, 31),
}


class DateError(ValueError):
    """A date term that cannot be read; the message says what forms are understood."""


@dataclass(frozen=True)
class DateRange:
    """Calendar days from `start` to `end`, both included; None is open."""

    start: date | None
    end: date | None

    def __str__(self) -> str:
        if self.start == self.end and self.start is not None:
            return self.start.isoformat()
        return f"{_iso(self.start)}..{_iso(self.end)}"

    def bounds(self) -> tuple[str | None, str | None]:
        """ISO strings for SQL over the stored ISO timestamps: start included, end excluded."""
        after = self.end + timedelta(days=1) if self.end else None
        return _iso(self.start) or None, _iso(after) or None


def _iso(day: date | None) -> str:
    return day.isoformat() if day else ""


def day(d: date) -> DateRange:
    return DateRange(d, d)


def week_of(d: date) -> DateRange:
    monday = d - timedelta(days=d.weekday())
    return DateRange(monday, monday + timedelta(days=6))


def month(year: int, number: int) -> DateRange:
    first = date(year, number, 1)
    nxt = date(year + (number == 12), number % 12 + 1, 1)
    return DateRange(first, nxt - timedelta(days=1))


def year(number: int) -> DateRange:
    return DateRange(date(number, 1, 1), date(number, 12, 31))


def latest_month(number: int, today: date) -> DateRange:
    """The month `number` of this year, or of last year when it has not come yet."""
    return month(today.year if number <= today.month else today.year - 1, number)


def latest_weekday(number: int, today: date, strictly_before: bool) -> date:
    back = (today.weekday() - number) % 7
    if back == 0 and strictly_before:
        back = 7
    return today - timedelta(days=back)


def month_before(today: date) -> DateRange:
    return month(today.year - (today.month == 1), (today.month - 2) % 12 + 1)


def relative(word: str, today: date) -> DateRange | None:
    """`today`, `yesterday`, `this-week`, `last-week`, `this-month`, `last-month`, `this-year`,
    `last-year` (spaces or hyphens), or None."""
    key = word.strip().lower().replace("-", " ").replace("_", " ")
    key = re.sub(r"\s+", " ", key)
    this_week = week_of(today)
    table = {
        "today": lambda: day(today),
        "yesterday": lambda: day(today - timedelta(days=1)),
        "this week": lambda: DateRange(this_week.start, today),
        "last week": lambda: week_of(today - timedelta(days=7)),
        "this month": lambda: DateRange(today.replace(day=1), today),
        "last month": lambda: month_before(today),
        "this year": lambda: DateRange(date(today.year, 1, 1), today),
        "last year": lambda: year(today.year - 1),
    }
    make = table.get(key)
    return make() if make else None


_ISO_PART = re.compile(r"(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?$")
_AGO = re.compile(r"(\d+)(d|w|m|y)$")


def term(text: str, today: date) -> DateRange:
    """A `date:` term's value: `2001-10-05`, `2001-10`, `2001`, `A..B` (either side may be left
    out, each side one of these), a relative word (`yesterday`, `last-week`…), a weekday
    (the latest one), or `7d`/`2w`/`3m`/`1y` (that long back to today)."""
    text = text.strip()
    if ".." in text:
        left, right = text.split("..", 1)
        start = term(left, today).start if left else None
        end = term(right, today).end if right else None
        if start is not None and end is not None and start > end:
            raise DateError(f"date:{text}: it starts after it ends; did you mean {right}..{left}?")
        return DateRange(start, end)
    found = relative(text, today) or _iso_range(text) or _ago(text, today)
    if found is None and text.lower() in WEEKDAYS:
        found = day(latest_weekday(WEEKDAYS[text.lower()], today, strictly_before=False))
    if found is None:
        raise DateError(
            f"date:{text}: expected YYYY-MM-DD, YYYY-MM or YYYY, a range A..B, a word such as "
            "yesterday, last-week, this-month, a weekday, or 7d / 2w / 3m / 1y"
        )
    return found


def _iso_range(text: str) -> DateRange | None:
    match = _ISO_PART.match(text)
    if not match:
        return None
    y, m, d = (int(g) if g else None for g in match.groups())
    try:
        if d is not None:
            return day(date(y, m, d))
        return month(y, m) if m is not None else year(y)
    except ValueError as exc:
        raise DateError(f"date:{text}: {exc}") from None


def _ago(text: str, today: date) -> DateRange | None:
    match = _AGO.match(text.lower())
    if not match:
        return None
    n, unit = int(match.group(1)), match.group(2)
    days = {"d": 1, "w": 7, "m": 30, "y": 365}[unit] * n
    try:  # 7d: today and the 6 days before it, as "the past 7 days" in words
        return DateRange(today - timedelta(days=max(days - 1, 0)), today)
    except OverflowError:
        raise DateError(f"date:{text}: further back than dates go") from None


# -- dates in a question's words ------------------------------------------------------------------

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
            if _bare_may(match):
                continue
            try:
                found = build(match.groupdict(), today)
            except (OverflowError, ValueError):
                continue
            if found is not None:
                start, span = _day_next_to(question, match, found)
                if start is None:
                    start, span = match.start(), _open_ended(question, match, found, today)
                return Found(span, question[start : match.end()].strip(), start, match.end())
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
    return month(int(g["year"]), number) if g.get("year") else latest_month(number, today)


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


_NUMBERS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "ten": 10}


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS[word.lower()]


def _words(g: dict, today: date) -> DateRange | None:
    phrase = g["phrase"].lower()
    if phrase.startswith("earlier this"):
        phrase = phrase.removeprefix("earlier ")
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


_N = r"(?P<n>\d+|a|one|two|three|four|five|six|ten)"
_RULES = [
    (_rule(r"(?P<iso>\d{4}-\d\d-\d\d)"), _iso_day),
    (_rule(r"the week of " + _MONTH + r" " + _DAYNUM + r"(?:,? " + _YEAR + r")?"), _week_of),
    (_rule(_MONTH + r" " + _DAYNUM + r"(?:,? " + _YEAR + r")?"), _on_date),
    (_rule(_DAYNUM + r" (?:of )?" + _MONTH + r"(?:,? " + _YEAR + r")?"), _on_date),
    (_rule(_HOLIDAY + r"(?: " + _YEAR + r")?"), _holiday),
    (_rule(_MONTH + r",? " + _YEAR), _month_named),
    (_rule(r"(?:in|during|of|from|since|after|before|until|through) " + _MONTH), _month_named),
    (_rule(r"(?:in|during|of|since|after|before|until) " + _YEAR), lambda g, t: _year(g)),
    (_rule(_N + r" " + _UNIT + r" ago"), _ago_words),
    (_rule(r"(?:the )?(?:past|last) " + _N + r" " + _UNIT), _past),
    (
        _rule(
            r"(?P<phrase>yesterday|today|(?:earlier )?this (?:week|month|year)"
            r"|last (?:week|month|year))"
        ),
        _words,
    ),
    # a weekday is a date after a word that makes it one ("on Monday", "last Friday", "since
    # Tuesday"); bare, it names a kind of thing ("the Saturday training ride")
    (_rule(r"(?:(?P<last>last )|(?:on|this|since|after|before|until|by) )" + _WEEKDAY), _weekday),
]
