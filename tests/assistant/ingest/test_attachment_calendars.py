"""Calendar invitations (ingest/attachment_formats.read_ics) as mailers really send them: in the
part's charset or with a byte order mark, cut short, timed with a DURATION."""

from __future__ import annotations

import pytest

from assistant.ingest.attachments import extract_text
from assistant.ingest.emails import parse_email
from tests.attachment_files import ICS

LUNCH = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//tests//EN\r\n"
    "BEGIN:VEVENT\r\nUID:1\r\nSUMMARY:Lunch at Café Müller\r\nDTSTART:20260414T120000Z\r\n"
    "END:VEVENT\r\nEND:VCALENDAR\r\n"
)


@pytest.mark.parametrize(
    ("encoding", "charset"),
    [
        ("latin-1", "iso-8859-1"),  # declared
        ("cp1252", None),  # not declared, not UTF-8
        ("utf-16", None),  # Outlook's "Unicode" export: a byte order mark
        ("utf-8-sig", "utf-8"),
    ],
)
def test_an_invitation_is_decoded_with_its_charset(encoding, charset):
    """icalendar read every file as UTF-8: a Latin-1 invitation indexed 'Caf� M�ller' and a
    UTF-16 one was 'unreadable', not indexed at all."""
    text, warning = extract_text("lunch.ics", ICS, LUNCH.encode(encoding), charset)
    assert warning is None
    assert text.splitlines()[0] == "Event: Lunch at Café Müller"


def test_an_invitation_part_is_read_with_the_charset_its_mime_header_declares():
    raw = (
        b"From: anna@example.nl\r\nTo: maya@lindqvist.me\r\nSubject: Lunch\r\n"
        b"Message-ID: <lunch@example.nl>\r\nMIME-Version: 1.0\r\n"
        b'Content-Type: multipart/mixed; boundary="b"\r\n\r\n'
        b"--b\r\nContent-Type: text/plain\r\n\r\nSee you there.\r\n"
        b'--b\r\nContent-Type: text/calendar; charset="ISO-8859-1"; method=REQUEST\r\n'
        b"Content-Transfer-Encoding: 8bit\r\n\r\n" + LUNCH.encode("latin-1") + b"--b--\r\n"
    )
    doc = parse_email(raw, "box")
    assert "[Attachment: invitation.ics]\nEvent: Lunch at Café Müller" in doc.text
    assert "\ufffd" not in doc.text
