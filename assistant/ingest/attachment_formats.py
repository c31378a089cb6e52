"""One reader per kind of attached file: bytes → the file's text as blocks (a page, a paragraph,
a table or sheet row, a calendar event), in reading order.

A reader yields block by block so that its caller (attachments.py) can stop it at the character
cap or the time limit between two blocks; it yields an empty block for a skipped row so that a
sheet of empty rows is stopped as well. A reader stops itself with `Cut` (a bound of its own: the
PDF page cap) or `Refused` (nothing to read: an encrypted PDF). The libraries are imported when a
file of theirs comes: an import without such attachments never loads them."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterable, Iterator
from datetime import date, datetime, timedelta
from itertools import zip_longest
from typing import Any

from assistant.ingest.attachment_limits import Limits
from assistant.ingest.bounds import looks_binary
from assistant.ingest.decode import decode_bytes
from assistant.ingest.html import html_to_text

_PARAGRAPH = re.compile(r"\n\s*\n")
_SNIFF_CHARS = 4096
# a content line that opens or closes a component (a folded line starts with a space)
_BEGIN_END = re.compile(r"^(BEGIN|END):([A-Za-z0-9-]+)[ \t]*\r?$", re.I | re.M)
_CUT_LINE = re.compile(r"(BEGIN|END):", re.I)


class Cut(Exception):
    """A reader stopped at a bound of its own: the text so far is kept, the reason warned."""


class Refused(Exception):
    """A reader found nothing it may read (an encrypted file): the reason is warned."""


def read_pdf(data: bytes, charset: str | None, limits: Limits) -> Iterator[str]:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data), strict=False)
    if reader.is_encrypted and not reader.decrypt(""):
        raise Refused("encrypted PDF (it needs a password); not indexed")
    pages = reader.pages
    total = len(pages)
    for i in range(min(total, limits.max_pages)):
        yield pages[i].extract_text() or ""
    if total > limits.max_pages:
        raise Cut(f"only the first {limits.max_pages} of its {total} pages read")


def read_docx(data: bytes, charset: str | None, limits: Limits) -> Iterator[str]:
    import docx
    from docx.table import Table

    for item in docx.Document(io.BytesIO(data)).iter_inner_content():
        if isinstance(item, Table):
            yield from rows_text(_row_cells(row) for row in item.rows)
        else:
            yield item.text


def _row_cells(row: Any) -> list[str]:
    """A Word table row's cell texts; a merged cell, which python-docx repeats (the same cell:
    equal proxies of one element), once."""
    cells: list[Any] = []
    for cell in row.cells:
        if not cells or cell != cells[-1]:
            cells.append(cell)
    return [cell.text for cell in cells]


def read_xlsx(data: bytes, charset: str | None, limits: Limits) -> Iterator[str]:
    from openpyxl import load_workbook

    book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    try:
        for sheet in book.worksheets:
            yield f"Sheet: {sheet.title}"
            rows = sheet.iter_rows(values_only=True)
            yield from rows_text([_cell_text(v) for v in row] for row in rows)
    finally:
        book.close()


def _cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        midnight = value.time() == datetime.min.time()
        return value.strftime("%Y-%m-%d" if midnight else "%Y-%m-%d %H:%M")
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def read_csv(data: bytes, charset: str | None, limits: Limits) -> Iterator[str]:
    text = _text_of(data, charset)
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(
            text[:_SNIFF_CHARS], delimiters=",;\t|"
        )
    except csv.Error:  # too little to tell: the usual comma
        dialect = csv.excel
    yield from rows_text(csv.reader(io.StringIO(text), dialect))


def rows_text(rows: Iterable[list[str]]) -> Iterator[str]:
    """A table as blocks: its first row (the header) tab-joined, then each row as
    `header: value; header: value`, so that a row read alone still says what its values are."""
    header: list[str] | None = None
    for row in rows:
        cells = [" ".join(c.split()) for c in row]
        if not any(cells):
            yield ""
        elif header is None:
            header = cells
            yield "\t".join(c for c in cells if c)
        else:
            pairs = zip_longest(header, cells, fillvalue="")
            yield "; ".join(f"{h}: {c}" if h else c for h, c in pairs if c)


def read_text(data: bytes, charset: str | None, limits: Limits) -> Iterator[str]:
    yield from _PARAGRAPH.split(_text_of(data, charset))


def read_html(data: bytes, charset: str | None, limits: Limits) -> Iterator[str]:
    yield from _PARAGRAPH.split(html_to_text(_text_of(data, charset)))


def _text_of(data: bytes, charset: str | None) -> str:
    text = decode_bytes(data, charset)[0]
    if looks_binary(text):
        raise Refused("its text is binary data; not indexed")
    return text


def read_ics(data: bytes, charset: str | None, limits: Limits) -> Iterator[str]:
    """Decoded as a text part is (its part's charset, a byte order mark, else UTF-8 or
    Windows-1252): icalendar itself reads bytes as UTF-8 only. A file cut short is read as far
    as it goes, with a warning: icalendar returns nothing of a component never ENDed."""
    from icalendar import Calendar

    text, unclosed = _closed(decode_bytes(data, charset)[0])
    for calendar in Calendar.from_ical(text, multiple=True):
        for item in calendar.walk():
            if item.name in ("VEVENT", "VTODO"):
                yield _event_text(item)
    if unclosed:
        ends = ", ".join(f"END:{name}" for name in unclosed)
        raise Cut(f"cut short (no {ends}); read as far as it goes")


def _closed(text: str) -> tuple[str, list[str]]:
    """`text` with each component it leaves open ENDed, and the names of those. A last line cut
    off before its value (or inside its BEGIN or END) is left out: icalendar refuses it."""
    closed, unclosed = _end_each(text)
    head, _, tail = text.rpartition("\n")
    tail = tail.rstrip("\r")
    if unclosed and tail and tail[0] not in " \t" and (":" not in tail or _CUT_LINE.match(tail)):
        closed, shorter = _end_each(head)
        unclosed = shorter or unclosed
    return closed, unclosed


def _end_each(text: str) -> tuple[str, list[str]]:
    """`text` with an END for each component left open: before the END of one around it, or at
    the end of the file; and the names of those it ENDed."""
    open_: list[str] = []
    unclosed: list[str] = []
    pieces: list[str] = []
    last = 0
    for line in _BEGIN_END.finditer(text):
        which, name = line.group(1).upper(), line.group(2).upper()
        if which == "BEGIN":
            open_.append(name)
        elif name in open_:
            while open_[-1] != name:  # the END of one around it: the inner ones end first
                unclosed.append(open_.pop())
                pieces += [text[last : line.start()], f"END:{unclosed[-1]}\r\n"]
                last = line.start()
            open_.pop()
    if not open_:
        return "".join([*pieces, text[last:]]), unclosed
    unclosed += reversed(open_)
    ends = "".join(f"\r\nEND:{name}" for name in reversed(open_))
    return "".join([*pieces, text[last:].rstrip("\r\n"), ends, "\r\n"]), unclosed


def _event_text(event: Any) -> str:
    """`Event: …`, `When: …`, `Where: …`, `Organizer: …`, `Attendees: …`, then the
    description: the lines a question about a meeting is answered from."""
    attendees = event.get("ATTENDEE") or []
    if not isinstance(attendees, list):
        attendees = [attendees]
    rules = event.get("RRULE") or []
    if not isinstance(rules, list):
        rules = [rules]  # (more than one: a list of them)
    lines = [
        ("Event", str(event.get("SUMMARY") or "")),
        ("When", _when(event.get("DTSTART"), _end(event))),
        ("Repeats", ", ".join(_raw(rule) for rule in rules)),
        ("Where", str(event.get("LOCATION") or "")),
        ("Organizer", _person(event.get("ORGANIZER"))),
        ("Attendees", ", ".join(_person(a) for a in attendees)),
    ]
    text = "\n".join(f"{key}: {' '.join(value.split())}" for key, value in lines if value.strip())
    description = str(event.get("DESCRIPTION") or "").strip()
    return f"{text}\n{description}" if description else text


def _end(event: Any) -> object:
    """When the event (or task) ends: its DTEND (DUE), else its start plus its DURATION."""
    end = _dt(event.get("DTEND") or event.get("DUE"))
    if end is not None:
        return end
    start, length = _dt(event.get("DTSTART")), _dt(event.get("DURATION"))
    if isinstance(start, date) and isinstance(length, timedelta) and length > timedelta(0):
        return start + length
    return None  # (a negative DURATION, which no event may have, as none)


def _when(start: Any, last: object) -> str:
    """The event's day(s) and times, to `last` (a date or datetime, else unknown); a start
    icalendar could not read (a UTC offset written in the value, a time cut short, not a date at
    all) as it is written."""
    if start is None:
        return ""
    first = _dt(start)
    if not isinstance(first, date):
        return _raw(start)
    if not isinstance(first, datetime):  # a whole day (or days): DTEND is the day after
        if isinstance(last, datetime):  # a malformed mix: compare days
            last = last.date()
        days = (last - first).days if isinstance(last, date) else 1
        if days <= 1:
            return _day(first)
        return f"{_day(first)} – {_day(first + timedelta(days=days - 1))}"
    text = f"{_day(first)} {first:%H:%M}"
    if isinstance(last, datetime):
        same_day = last.date() == first.date()
        text += f" – {last:%H:%M}" if same_day else f" – {_day(last)} {last:%H:%M}"
    zone = first.tzname()
    return f"{text} ({zone})" if zone else text


def _dt(prop: Any) -> object:
    """A date property's value (a date or datetime, when well formed); None when it is absent
    or icalendar could not read it (a broken property raises on `.dt`)."""
    try:
        return None if prop is None else prop.dt
    except (AttributeError, ValueError):
        return None


def _raw(prop: Any) -> str:
    """A property as it is written in the file."""
    if isinstance(prop, str):  # text, or one icalendar could not read (vBroken): the raw value
        return str(prop)
    try:
        return prop.to_ical().decode("utf-8", "replace")
    except Exception:  # noqa: BLE001 - one that cannot be written back: its str
        return str(prop)


def _day(day: date) -> str:
    return f"{day:%A} {day.day} {day:%B %Y}"


def _person(address: Any) -> str:
    if address is None:
        return ""
    mail = re.sub(r"(?i)^mailto:", "", str(address))
    name = str(getattr(address, "params", {}).get("CN", "")).strip()
    return f"{name} <{mail}>" if name else mail


Reader = Callable[[bytes, "str | None", Limits], Iterator[str]]

FORMATS: dict[str, Reader] = {
    "pdf": read_pdf,
    "docx": read_docx,
    "xlsx": read_xlsx,
    "csv": read_csv,
    "ics": read_ics,
    "html": read_html,
    "text": read_text,
}
