"""Attached files → text (ingest/attachments.py): each format's text comes out, and each hostile
file (truncated, encrypted, a zip bomb, binary labelled text, over the cap, too slow) yields one
warning naming it, never an exception."""

from __future__ import annotations

import io
import os
from datetime import date, datetime
from email import policy
from email.parser import BytesParser

import docx
import pytest

from assistant.ingest.attachment_limits import Limits
from assistant.ingest.attachments import (
    extract_text,
    kind_of,
    leave_out_large_parts,
    read_attachments,
)
from assistant.ingest.emails import parse_email
from tests.attachment_files import (
    AMSTERDAM,
    CSV,
    DOCX,
    ICS,
    PDF,
    XLSX,
    csv_bytes,
    docx_bytes,
    encrypted_pdf,
    ics_bytes,
    pdf_bytes,
    with_entity_bomb,
    xlsx_bytes,
    zip_bomb_docx,
)
from tests.conftest import make_email

BUDGET = [["Budget 2026 (draft)", "Roof repair: EUR 12,400"], ["Gutters: EUR 1,150"]]


def test_pdf_text_comes_out_page_by_page():
    text, warning = extract_text("budget.pdf", PDF, pdf_bytes(BUDGET))
    assert warning is None
    assert "Budget 2026 (draft)" in text and "Roof repair: EUR 12,400" in text
    assert text.index("Roof repair") < text.index("Gutters: EUR 1,150")


def test_docx_paragraphs_and_table_rows_come_out():
    data = docx_bytes(
        ["Minutes of the parents' evening.", "The school trip goes to Texel in May."],
        table=[["Item", "Owner"], ["Tickets", "Priya"], ["Bus", "Jonas"]],
    )
    text, warning = extract_text("minutes.docx", DOCX, data)
    assert warning is None
    assert "The school trip goes to Texel in May." in text
    assert "Item\tOwner" in text and "Item: Bus; Owner: Jonas" in text


def test_docx_merged_cells_count_once_and_equal_neighbours_twice():
    document = docx.Document()
    table = document.add_table(rows=2, cols=3)
    table.cell(0, 0).merge(table.cell(0, 1)).text = "Item"
    table.cell(0, 2).text = "Paid"
    for col, value in enumerate(["Yes", "Yes", "Done"]):
        table.cell(1, col).text = value
    out = io.BytesIO()
    document.save(out)
    text, _ = extract_text("t.docx", DOCX, out.getvalue())
    assert text.splitlines() == ["Item\tPaid", "", "Item: Yes; Paid: Yes; Done"]


def test_xlsx_rows_carry_their_headers():
    sheets = {
        "Costs": [["Item", "Cost", "Due"], ["Scaffolding", 2300, datetime(2026, 5, 1)]],
        "Notes": [["only a note"]],
    }
    text, warning = extract_text("costs.xlsx", XLSX, xlsx_bytes(sheets))
    assert warning is None
    assert "Sheet: Costs" in text and "Item: Scaffolding; Cost: 2300; Due: 2026-05-01" in text
    assert "Sheet: Notes" in text and "only a note" in text


@pytest.mark.parametrize("delimiter", [",", ";"])
def test_csv_rows_carry_their_headers(delimiter):
    rows = [["name", "shirt size"], ["Elin", "M"], ["Maya", "S"]]
    text, warning = extract_text("sizes.csv", CSV, csv_bytes(rows, delimiter))
    assert warning is None and "name: Maya; shirt size: S" in text


def test_invitation_says_what_when_where_and_who():
    data = ics_bytes(
        "Board meeting",
        datetime(2026, 4, 14, 10, 0, tzinfo=AMSTERDAM),
        datetime(2026, 4, 14, 11, 30, tzinfo=AMSTERDAM),
        location="Room 4.12, Stationsplein 3",
        organizer=("Anna Berg", "anna@example.nl"),
        attendees=[("Bram de Vries", "bram@example.nl"), ("Maya", "maya@lindqvist.me")],
        description="Agenda: the 2026 budget.",
    )
    text, warning = extract_text("invite.ics", ICS, data)
    assert warning is None
    lines = text.splitlines()
    assert "Event: Board meeting" in lines
    assert "When: Tuesday 14 April 2026 10:00 – 11:30 (CEST)" in lines
    assert "Where: Room 4.12, Stationsplein 3" in lines
    assert "Organizer: Anna Berg <anna@example.nl>" in lines
    assert "Attendees: Bram de Vries <bram@example.nl>, Maya <maya@lindqvist.me>" in lines
    assert "Agenda: the 2026 budget." in lines


@pytest.mark.parametrize(
    ("start", "end", "when"),
    [
        (date(2026, 8, 8), date(2026, 8, 9), "When: Saturday 8 August 2026"),
        (
            date(2026, 8, 8),
            date(2026, 8, 11),
            "When: Saturday 8 August 2026 – Monday 10 August 2026",
        ),
        (date(2026, 8, 8), datetime(2026, 8, 9, 0, 0), "When: Saturday 8 August 2026"),
    ],
)
def test_whole_day_events_say_their_days(start, end, when):
    text, warning = extract_text("wedding.ics", ICS, ics_bytes("Wedding", start, end))
    assert warning is None and when in text.splitlines()


def test_html_attachment_is_read_as_text():
    html = (
        b"<html><body><h1>E-ticket</h1><p>Ferry Hoek van Holland &ndash; Harwich</p>"
        b"<table><tr><td>Cabin</td><td>8214</td></tr></table></body></html>"
    )
    text, warning = extract_text("ticket.html", "text/html", html)
    assert warning is None and "Ferry Hoek van Holland – Harwich" in text
    assert "Cabin" in text and "8214" in text and "<td>" not in text
    assert "HTML file" in one_warning("big.htm", "text/html", html, Limits(max_whole_bytes=100))
    msg = make_email(body="E-ticket: ferry to Harwich.", html=html.decode())
    msg.get_payload()[1]["Content-Disposition"] = 'inline; filename="ticket.html"'
    doc = parse_email(msg.as_bytes(), "box")  # the body's own HTML alternative: not read again
    assert doc.text == "E-ticket: ferry to Harwich."
    msg = make_email(body="Your ticket.", attachments=[("ticket.html", "text/html", html)])
    assert "[Attachment: ticket.html]\n" in parse_email(msg.as_bytes(), "box").text


def test_plain_text_attachment_is_decoded_with_its_charset():
    data = "Hälsningar från Åsa: the key is under the mat.".encode("iso-8859-1")
    text, warning = extract_text("note.txt", "text/plain", data, charset="iso-8859-1")
    assert warning is None and text == "Hälsningar från Åsa: the key is under the mat."


def test_kind_is_told_by_extension_then_by_type():
    assert kind_of("Budget.PDF", "application/octet-stream") == "pdf"
    assert kind_of("invite", "text/calendar") == "ics"
    assert kind_of("photo.jpg", "image/jpeg") is None
    assert extract_text("photo.jpg", "image/jpeg", os.urandom(100)) == ("", None)


def one_warning(name: str, ctype: str, data: bytes, limits: Limits | None = None) -> str:
    text, warning = extract_text(name, ctype, data, limits=limits or Limits())
    assert warning is not None and name in warning
    return warning


def test_truncated_pdf_is_one_warning():
    data = pdf_bytes(BUDGET)
    assert "unreadable" in one_warning("cut.pdf", PDF, data[: len(data) // 2])


def test_encrypted_pdf_is_read_with_an_empty_password_else_warned():
    for algorithm in ("RC4-128", "AES-256"):  # AES: what most permission-locked PDFs use
        text, warning = extract_text("open.pdf", PDF, encrypted_pdf(BUDGET, "", algorithm))
        assert warning is None and "Roof repair" in text
    warning = one_warning("locked.pdf", PDF, encrypted_pdf(BUDGET, "secret"))
    assert "encrypted" in warning


def test_zip_bomb_is_refused_before_the_library_opens_it():
    assert "zip bomb" in one_warning("bomb.docx", DOCX, zip_bomb_docx(120))
    small = zip_bomb_docx(5)  # under the total cap, but it inflates a thousandfold
    assert "inflates" in one_warning("small-bomb.docx", DOCX, small)


def test_an_entity_bomb_in_office_xml_is_one_warning():
    docx_bomb = with_entity_bomb(docx_bytes(["lol here"]), "word/document.xml", b"lol here")
    assert "amplification" in one_warning("lol.docx", DOCX, docx_bomb)
    sheet = "xl/worksheets/sheet1.xml"
    xlsx_bomb = with_entity_bomb(xlsx_bytes({"S": [["lol here"]]}), sheet, b"lol here")
    assert "amplification" in one_warning("lol.xlsx", XLSX, xlsx_bomb)


def test_binary_labelled_as_text_is_not_indexed():
    warning = one_warning("dump.txt", "text/plain", os.urandom(20_000))
    assert "binary" in warning


def test_oversize_and_over_long_files_are_bounded():
    data = pdf_bytes([[f"Page {i} line"] for i in range(5)])
    assert "cap" in one_warning("big.pdf", PDF, data, Limits(max_bytes=len(data) - 1))
    text, warning = extract_text("long.pdf", PDF, data, limits=Limits(max_pages=2))
    assert "Page 1 line" in text and "Page 2" not in text and "2 of its 5 pages" in warning
    text, warning = extract_text("slow.pdf", PDF, data, limits=Limits(max_seconds=0))
    assert "Page 0 line" in text and "Page 1" not in text and "time limit" in warning
    start = datetime(2026, 6, 1, 9, 0, tzinfo=AMSTERDAM)
    ics = ics_bytes("Kickoff", start, start)
    assert "calendar" in one_warning("all.ics", ICS, ics, Limits(max_whole_bytes=len(ics) - 1))
    rows = [["n", "word"]] + [[str(i), "lorem ipsum"] for i in range(1000)]
    text, warning = extract_text("rows.csv", CSV, csv_bytes(rows), limits=Limits(max_chars=500))
    assert len(text) <= 500 and "500 characters" in warning


def test_garbage_under_an_office_name_is_one_warning():
    for name, ctype in (("x.docx", DOCX), ("x.xlsx", XLSX), ("x.ics", ICS), ("x.pdf", PDF)):
        one_warning(name, ctype, os.urandom(5000))


def test_mail_text_gets_a_section_per_file_and_keeps_its_hash():
    body = "See the attached budget.\n\n> On Monday Bram wrote:\n> old text"
    plain = parse_email(make_email(body=body, msgid="<b@x>").as_bytes(), "box")
    files = [("budget.pdf", PDF, pdf_bytes(BUDGET)), ("dump.txt", "text/plain", os.urandom(9000))]
    doc = parse_email(make_email(body=body, msgid="<b@x>", attachments=files).as_bytes(), "box")
    assert doc.content_hash == plain.content_hash
    assert doc.text.startswith(plain.text + "\n\n[Attachment: budget.pdf]\nBudget 2026")
    assert "dump.txt" not in doc.text and [a.name for a in doc.attachments] == [
        "budget.pdf",
        "dump.txt",
    ]
    assert len(doc.warnings) == 1 and "'dump.txt'" in doc.warnings[0]


def test_quote_like_lines_in_a_file_are_kept():
    data = docx_bytes(["> a line that looks quoted", "-- ", "Text after a signature marker."])
    doc = parse_email(make_email(attachments=[("q.docx", DOCX, data)]).as_bytes(), "box")
    assert "> a line that looks quoted" in doc.text
    assert "Text after a signature marker." in doc.text


def test_inline_invitation_is_read_though_not_listed():
    msg = make_email(body="You are invited.")
    start = datetime(2026, 6, 1, 9, 0, tzinfo=AMSTERDAM)
    msg.add_alternative(ics_bytes("Kickoff", start, start), maintype="text", subtype="calendar")
    doc = parse_email(msg.as_bytes(), "box")
    assert doc.attachments == []
    assert "[Attachment: invitation.ics]\nEvent: Kickoff" in doc.text
    msg.add_attachment(ics_bytes("Kickoff", start, start), "text", "calendar", filename="a.ics")
    again = parse_email(msg.as_bytes(), "box")  # the same invitation attached as well: read once
    assert [a.name for a in again.attachments] == ["a.ics"] and again.text == doc.text


@pytest.mark.parametrize("linesep", ["\n", "\r\n"])
def test_an_over_cap_part_is_left_out_before_parsing_yet_listed_and_warned(linesep):
    files = [("scan.pdf", PDF, os.urandom(3000)), ("small.pdf", PDF, pdf_bytes(BUDGET))]
    msg = make_email(body="The body stays.", attachments=files)
    raw = msg.as_bytes(policy=msg.policy.clone(linesep=linesep))
    assert leave_out_large_parts(raw, 10_000) is raw
    cut = leave_out_large_parts(raw, 2000)
    assert len(cut) < len(raw) - 3000
    parsed = BytesParser(policy=policy.default).parsebytes(cut)
    listed, sections, warnings = read_attachments(parsed, Limits(max_bytes=2000))
    assert [a.name for a in listed] == ["scan.pdf", "small.pdf"] and listed[0].size >= 3000
    assert len(warnings) == 1 and "'scan.pdf'" in warnings[0] and "cap" in warnings[0]
    assert len(sections) == 1 and sections[0].startswith("[Attachment: small.pdf]\nBudget")
    assert parsed.get_body().get_content().strip() == "The body stays."


def test_an_over_cap_text_body_is_left_out_with_a_warning():
    msg = make_email()
    msg.set_content("word " * 2000, cte="base64")
    cut = leave_out_large_parts(msg.as_bytes(), 2000)
    doc = parse_email(cut, "box")
    assert doc.text == "" and len(doc.warnings) == 1 and "left out" in doc.warnings[0]


def test_a_body_with_a_file_name_is_listed_but_not_read_twice():
    msg = make_email(body="The only text, in a part with a file name.")
    msg["Content-Disposition"] = 'inline; filename="note.txt"'
    doc = parse_email(msg.as_bytes(), "box")
    assert doc.text == "The only text, in a part with a file name."
    assert [a.name for a in doc.attachments] == ["note.txt"]


def test_a_mail_forwarded_as_an_attachment_is_read_with_the_mail():
    """Outlook's and Apple Mail's "forward as attachment" (a message/rfc822 part): its sender,
    date, subject and text are the mail's, and a file attached to it is read as any; it was
    dropped whole, not even listed."""
    from assistant.ingest.emails import parse_email

    raw = (
        b"From: a@x.org\nSubject: FYI\nMessage-ID: <fwd.1@x>\nMIME-Version: 1.0\n"
        b'Content-Type: multipart/mixed; boundary="B"\n\n--B\nContent-Type: text/plain\n\n'
        b"FYI see below.\n--B\nContent-Type: message/rfc822\n\n"
        b"From: Carol <c@y.org>\nDate: Tue, 5 Mar 2019 10:00:00 +0000\nSubject: Q3 budget\n"
        b'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="C"\n\n'
        b"--C\nContent-Type: text/plain\n\nThe budget for Q3 is 42000 euros.\n"
        b'--C\nContent-Type: text/plain; name="note.txt"\nContent-Disposition: attachment; '
        b'filename="note.txt"\n\nRoom 4B is booked.\n--C--\n--B--\n'
    )
    doc = parse_email(raw, "x")
    assert doc.text.startswith("FYI see below.")
    assert "[Attachment: forwarded mail: Q3 budget]\nFrom: Carol <c@y.org>" in doc.text
    assert "The budget for Q3 is 42000 euros." in doc.text and "Room 4B is booked." in doc.text
    assert [a.name for a in doc.attachments] == ["forwarded mail: Q3 budget", "note.txt"]
    assert doc.attachments[0].content_type == "message/rfc822" and doc.attachments[0].size > 0


@pytest.mark.parametrize(
    ("name", "ctype", "text", "encoding", "expected"),
    [
        ("list.txt", "text/plain", "Ferry: cabin 8214.", "utf-16", "Ferry: cabin 8214."),
        ("sizes.csv", CSV, "name\tsize\nElin\tM\n", "utf-16", "name: Elin; size: M"),
        ("sizes.csv", CSV, "name,size\nElin,M\n", "utf-8-sig", "name: Elin; size: M"),
    ],
)
def test_a_text_file_with_a_byte_order_mark_is_read(name, ctype, text, encoding, expected):
    """Excel's "Unicode text" is UTF-16 and its "CSV UTF-8" starts with a byte order mark: the
    first was not indexed at all ("binary data"), the second's first header was '\\ufeffname'
    in every row."""
    found, warning = extract_text(name, ctype, text.encode(encoding))
    assert warning is None and expected in found.splitlines() and "\ufeff" not in found


def test_one_unreadable_date_costs_only_that_date():
    """A DTSTART icalendar cannot read (a UTC offset written in the value, as some booking
    systems do; a time cut short) or an event with two RRULEs raised on reading: the whole
    invitation, its title, place and people, and every event after it, were not indexed."""
    calendar = (
        b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//tests//EN\r\n"
        b"BEGIN:VEVENT\r\nUID:1\r\nSUMMARY:Dentist\r\nDTSTART:20260414T100000+0200\r\n"
        b"LOCATION:Tandartspraktijk Zuid\r\nEND:VEVENT\r\n"
        b"BEGIN:VEVENT\r\nUID:2\r\nSUMMARY:Choir\r\nDTSTART:20260415T190000Z\r\n"
        b"RRULE:FREQ=WEEKLY\r\nRRULE:FREQ=MONTHLY;BYDAY=1SA\r\nEND:VEVENT\r\n"
        b"BEGIN:VEVENT\r\nUID:3\r\nSUMMARY:Bake sale\r\nDTSTART;VALUE=DATE:20260502\r\n"
        b"END:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    text, warning = extract_text("agenda.ics", ICS, calendar)
    assert warning is None
    assert text.split("\n\n") == [
        "Event: Dentist\nWhen: 20260414T100000+0200\nWhere: Tandartspraktijk Zuid",
        "Event: Choir\nWhen: Wednesday 15 April 2026 19:00 (UTC)\n"
        "Repeats: FREQ=WEEKLY, FREQ=MONTHLY;BYDAY=1SA",
        "Event: Bake sale\nWhen: Saturday 2 May 2026",
    ]
