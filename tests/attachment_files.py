"""Attached files for tests, written with each format's own library (python-docx, openpyxl,
icalendar, csv) and, for PDF, with a minimal one-font PDF writer of its own: pypdf writes no
text."""

from __future__ import annotations

import csv
import io
import zipfile
from datetime import datetime
from zoneinfo import ZoneInfo

PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
ICS = "text/calendar"
CSV = "text/csv"


def _pdf_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def pdf_bytes(pages: list[list[str]]) -> bytes:
    """A PDF with one page per item of `pages`, each line shown in Helvetica: a catalog, a page
    tree, a font, a page and a content stream per page, and an xref table of their offsets."""
    n = len(pages)
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(n))
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: f"<< /Type /Pages /Kids [{kids}] /Count {n} >>".encode(),
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }
    for i, lines in enumerate(pages):
        shown = " ".join(f"({_pdf_string(line)}) Tj T*" for line in lines)
        stream = f"BT /F1 12 Tf 14 TL 72 720 Td {shown} ET".encode("latin-1")
        objects[4 + 2 * i] = (
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>"
        ).encode()
        objects[5 + 2 * i] = b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream)
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number in range(1, len(objects) + 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, objects[number])
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def encrypted_pdf(pages: list[list[str]], user_password: str, algorithm: str = "RC4-128") -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes(pages))))
    writer.encrypt(user_password, owner_password="owner", algorithm=algorithm)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def docx_bytes(paragraphs: list[str], table: list[list[str]] | None = None) -> bytes:
    import docx

    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for row, values in zip(grid.rows, table, strict=True):
            for cell, value in zip(row.cells, values, strict=True):
                cell.text = value
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def xlsx_bytes(sheets: dict[str, list[list[object]]]) -> bytes:
    from openpyxl import Workbook

    book = Workbook()
    book.remove(book.active)
    for title, rows in sheets.items():
        sheet = book.create_sheet(title)
        for row in rows:
            sheet.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def csv_bytes(rows: list[list[str]], delimiter: str = ",") -> bytes:
    out = io.StringIO()
    csv.writer(out, delimiter=delimiter).writerows(rows)
    return out.getvalue().encode("utf-8")


def ics_bytes(
    summary: str,
    start: datetime,
    end: datetime,
    location: str = "",
    organizer: tuple[str, str] | None = None,
    attendees: list[tuple[str, str]] = (),
    description: str = "",
) -> bytes:
    from icalendar import Calendar, Event, vCalAddress

    calendar = Calendar()
    calendar.add("prodid", "-//tests//attachments//EN")
    calendar.add("version", "2.0")
    event = Event()
    event.add("uid", f"{summary.replace(' ', '-')}@tests")
    event.add("summary", summary)
    event.add("dtstart", start)
    event.add("dtend", end)
    if location:
        event.add("location", location)
    if description:
        event.add("description", description)
    for key, people in (("organizer", [organizer] if organizer else []), ("attendee", attendees)):
        for name, mail in people:
            address = vCalAddress(f"mailto:{mail}")
            address.params["cn"] = name
            event.add(key, address)
    calendar.add_component(event)
    return calendar.to_ical()


AMSTERDAM = ZoneInfo("Europe/Amsterdam")


def zip_bomb_docx(inflated_mb: int = 120) -> bytes:
    """A .docx-named zip whose document.xml inflates from a few hundred kB of zeros to
    `inflated_mb` MB (written a megabyte at a time: the zeros are never all in memory)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
        with zf.open("word/document.xml", "w", force_zip64=True) as member:
            block = bytes(1 << 20)
            for _ in range(inflated_mb):
                member.write(block)
    return out.getvalue()


def with_entity_bomb(office: bytes, member: str, text: bytes) -> bytes:
    """`office` with `member` made a billion-laughs XML bomb: a DTD of nested entities (ten to
    the ninth 'lol'), and `text` in the member replaced by the outermost entity."""
    entities = b"".join(
        b'<!ENTITY lol%d "%s">' % (i, (b"&lol%d;" % (i - 1)) * 10) for i in range(1, 10)
    )
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(office)) as zin, zipfile.ZipFile(out, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == member:
                start = data.index(b"<", data.index(b"?>") + 2 if b"?>" in data else 0)
                dtd = b'<!DOCTYPE x [<!ENTITY lol0 "lol">' + entities + b"]>"
                data = dtd + data[start:].replace(text, b"&lol9;")
            zout.writestr(info, data)
    return out.getvalue()
