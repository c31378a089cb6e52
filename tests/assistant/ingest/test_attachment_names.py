"""Attached files as broken mailers name and type them (ingest/parts.file_name,
ingest/attachments.kind_of): a name written unquoted with spaces in it is listed whole, and a
file sent as application/octet-stream is read by its name's extension or, for a PDF, its first
bytes."""

from __future__ import annotations

import base64
import io
import zipfile

import pytest

from assistant.ingest.attachments import extract_text, kind_of
from assistant.ingest.emails import parse_email
from tests.attachment_files import pdf_bytes

INVOICE = pdf_bytes([["Invoice 2026-03: total EUR 1,240"]])
UNTYPED = "application/octet-stream"


def _mail(headers: bytes, payload: bytes = INVOICE) -> bytes:
    return (
        b"From: billing@example.de\r\nTo: maya@lindqvist.me\r\nSubject: Rechnung\r\n"
        b"Message-ID: <rechnung@example.de>\r\nMIME-Version: 1.0\r\n"
        b'Content-Type: multipart/mixed; boundary="b"\r\n\r\n'
        b"--b\r\nContent-Type: text/plain\r\n\r\nAnbei die Rechnung.\r\n"
        b"--b\r\n"
        + headers
        + b"\r\nContent-Transfer-Encoding: base64\r\n\r\n"
        + base64.encodebytes(payload)
        + b"--b--\r\n"
    )


@pytest.mark.parametrize(
    "headers",
    [
        b"Content-Type: application/pdf\r\n"
        b"Content-Disposition: attachment; filename=Rechnung M\xc3\xa4rz.pdf",
        b"Content-Type: application/octet-stream\r\n"
        b"Content-Disposition: attachment; filename=Rechnung M\xc3\xa4rz.pdf; size=613",
        b"Content-Type: application/octet-stream; name=Rechnung M\xe4rz.pdf\r\n"  # Latin-1
        b"Content-Disposition: attachment",
        b"Content-Type: application/octet-stream\r\n"
        b"Content-Disposition: attachment;\r\n filename=Rechnung M\xc3\xa4rz.pdf",  # folded
    ],
)
def test_a_name_written_unquoted_with_spaces_is_kept_whole_and_read_by_its_extension(headers):
    """The email package keeps only its first word: the file was listed as 'Rechnung', and sent
    as application/octet-stream (as such mailers do) the PDF was not read at all."""
    doc = parse_email(_mail(headers), "box")
    assert [a.name for a in doc.attachments] == ["Rechnung März.pdf"]
    assert "[Attachment: Rechnung März.pdf]\nInvoice 2026-03: total EUR 1,240" in doc.text
    assert doc.warnings == []


@pytest.mark.parametrize(
    ("disposition", "name"),
    [
        (b'attachment; filename="Rechnung M\xc3\xa4rz.pdf"', "Rechnung März.pdf"),
        (b"attachment; filename*=utf-8''Rechnung%20M%C3%A4rz.pdf", "Rechnung März.pdf"),
        (b"attachment; filename=Rechnung.pdf", "Rechnung.pdf"),
    ],
)
def test_a_name_written_as_the_standard_says_is_read_as_before(disposition, name):
    headers = b"Content-Type: application/pdf\r\nContent-Disposition: " + disposition
    assert [a.name for a in parse_email(_mail(headers), "box").attachments] == [name]


def test_a_name_written_as_an_unquoted_encoded_word_is_decoded():
    """`filename==?utf-8?Q?…?=` (RFC 2047 where RFC 2231 belongs, unquoted): the email package
    gives no name at all, and the attachment was listed as unnamed and its PDF left unread."""
    word = b"=?utf-8?Q?Rechnung_M=C3=A4rz.pdf?="
    headers = b"Content-Type: application/pdf; name=" + word
    doc = parse_email(_mail(headers + b"\r\nContent-Disposition: attachment; filename=" + word),
                      "box")  # fmt: skip
    assert [a.name for a in doc.attachments] == ["Rechnung März.pdf"]
    assert "Invoice 2026-03: total EUR 1,240" in doc.text


def test_a_pdf_of_no_type_and_no_telling_name_is_told_by_its_first_bytes():
    headers = b"Content-Type: application/octet-stream\r\nContent-Disposition: attachment"
    doc = parse_email(_mail(headers + b"; filename=scan0042"), "box")
    assert "[Attachment: scan0042]\nInvoice 2026-03: total EUR 1,240" in doc.text
    assert kind_of("scan0042", UNTYPED, INVOICE) == "pdf"
    # not every file: only one of no type, and only a PDF's header
    assert kind_of("scan0042", "image/png", INVOICE) is None
    assert kind_of("photo.jpg", UNTYPED, b"\xff\xd8\xff\xe0" + INVOICE) is None
    stored = io.BytesIO()  # a zip of PDFs holds their headers in its first bytes
    with zipfile.ZipFile(stored, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("rechnung.pdf", INVOICE)
    zipped = parse_email(_mail(headers + b"; filename=invoices.zip", stored.getvalue()), "box")
    assert [a.name for a in zipped.attachments] == ["invoices.zip"] and zipped.warnings == []
    assert "Invoice" not in zipped.text
    assert extract_text("scan0042", UNTYPED, b"%PDF-1.4 cut")[1].startswith(
        "attachment 'scan0042': unreadable"
    )


def test_a_forwarded_mail_named_unquoted_with_spaces_is_listed_whole():
    inner = b"From: carol@example.de\r\nSubject: Q3\r\n\r\nThe budget is 42000 euros.\r\n"
    raw = (
        b"From: a@example.de\r\nTo: maya@lindqvist.me\r\nSubject: Fwd\r\n"
        b"Message-ID: <fwd@example.de>\r\nMIME-Version: 1.0\r\n"
        b'Content-Type: multipart/mixed; boundary="b"\r\n\r\n'
        b"--b\r\nContent-Type: text/plain\r\n\r\nFYI.\r\n--b\r\nContent-Type: message/rfc822\r\n"
        b"Content-Disposition: attachment; filename=Q3 budget.eml\r\n\r\n" + inner + b"--b--\r\n"
    )
    doc = parse_email(raw, "box")
    assert [a.name for a in doc.attachments] == ["Q3 budget.eml"]
    assert "[Attachment: Q3 budget.eml]\nFrom: carol@example.de" in doc.text
