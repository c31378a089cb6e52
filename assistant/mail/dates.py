"""Dates in query terms, and the calendar arithmetic of dates in words (mail/date_words.py),
computed in code against a `today` (never by the model).

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


def weekend(today: date, weeks_back: int = 0) -> DateRange:
    """The latest weekend begun by `today` (its Saturday up to today), or the one `weeks_back`
    weeks before this week's: "this weekend" asked on a Tuesday is the one just gone."""
    saturday = week_of(today - timedelta(days=7 * weeks_back)).start + timedelta(days=5)
    if saturday > today:
        saturday -= timedelta(days=7)
    return DateRange(saturday, min(saturday + timedelta(days=1), today))


def month_before(today: date) -> DateRange:
    return month(today.year - (today.month == 1), (today.month - 2) % 12 + 1)


def relative(word: str, today: date) -> DateRange | None:
    """`today`, `yesterday`, `this-week`, `last-week`, `this-weekend`, `last-weekend`,
    `this-month`, `last-month`, `this-year`, `last-year` (spaces or hyphens), or None."""
    key = word.strip().lower().replace("-", " ").replace("_", " ")
    key = re.sub(r"\s+", " ", key)
    this_week = week_of(today)
    table = {
        "today": lambda: day(today),
        "yesterday": lambda: day(today - timedelta(days=1)),
        "this week": lambda: DateRange(this_week.start, today),
        "last week": lambda: week_of(today - timedelta(days=7)),
        "this weekend": lambda: weekend(today),
        "last weekend": lambda: weekend(today, weeks_back=1),
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
