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


AGENDA = (
    b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//tests//EN\r\n"
    b"BEGIN:VEVENT\r\nUID:1\r\nSUMMARY:Dentist\r\nDTSTART:20260414T100000Z\r\n"
    b"DTEND:20260414T103000Z\r\nEND:VEVENT\r\n"
    b"BEGIN:VEVENT\r\nUID:2\r\nSUMMARY:Choir practice\r\nDTSTART:20260415T190000Z\r\n"
    b"LOCATION:Church hall\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
)
DENTIST = "Event: Dentist\nWhen: Tuesday 14 April 2026 10:00 – 10:30 (UTC)"
CHOIR = "Event: Choir practice\nWhen: Wednesday 15 April 2026 19:00 (UTC)"


@pytest.mark.parametrize(
    ("end", "events", "missing"),
    [
        (b"END:VEVENT\r\n", [DENTIST, f"{CHOIR}\nWhere: Church hall"], "END:VCALENDAR"),
        (b"LOCATION:Church hall\r\n", [DENTIST, f"{CHOIR}\nWhere: Church hall"], "END:VEVENT"),
        (b"LOCATION:Church h", [DENTIST, f"{CHOIR}\nWhere: Church h"], "END:VEVENT"),
        (b"LOCAT", [DENTIST, CHOIR], "END:VEVENT"),  # a line cut before its value: left out
        (b"END:VEV", [DENTIST, f"{CHOIR}\nWhere: Church hall"], "END:VEVENT"),
        (b"SUMMARY:Choir", [DENTIST, "Event: Choir"], "END:VEVENT"),
        (b"BEGIN:VEVENT\r\nUID:2", [DENTIST], "END:VEVENT"),
    ],
)
def test_a_calendar_cut_short_is_read_as_far_as_it_goes_with_a_warning(end, events, missing):
    """icalendar returns nothing of a component never ENDed: a calendar cut short (a mail
    truncated in the mailbox, an export interrupted) indexed nothing and said nothing."""
    data = AGENDA[: AGENDA.rindex(end) + len(end)]
    text, warning = extract_text("agenda.ics", ICS, data)
    assert text.split("\n\n") == events
    assert warning.startswith("attachment 'agenda.ics': cut short (no ")
    assert missing in warning and "read as far as it goes" in warning


def test_an_event_left_open_inside_a_calendar_is_read_with_the_events_after_it():
    data = AGENDA.replace(b"DTEND:20260414T103000Z\r\nEND:VEVENT\r\n", b"")
    text, warning = extract_text("agenda.ics", ICS, data)
    assert text.split("\n\n") == [
        "Event: Dentist\nWhen: Tuesday 14 April 2026 10:00 (UTC)",
        f"{CHOIR}\nWhere: Church hall",
    ]
    assert warning == "attachment 'agenda.ics': cut short (no END:VEVENT); read as far as it goes"


def test_a_whole_calendar_without_a_last_line_end_reads_without_a_warning():
    text, warning = extract_text("agenda.ics", ICS, AGENDA.rstrip(b"\r\n"))
    assert warning is None and text.split("\n\n") == [DENTIST, f"{CHOIR}\nWhere: Church hall"]


@pytest.mark.parametrize(
    ("timing", "when"),
    [
        (
            "DTSTART:20260414T100000Z\r\nDURATION:PT1H30M",
            "When: Tuesday 14 April 2026 10:00 – 11:30 (UTC)",
        ),
        (
            "DTSTART;TZID=Europe/Amsterdam:20260414T230000\r\nDURATION:PT2H",
            "When: Tuesday 14 April 2026 23:00 – Wednesday 15 April 2026 01:00 (CEST)",
        ),
        (
            "DTSTART;VALUE=DATE:20260808\r\nDURATION:P3D",
            "When: Saturday 8 August 2026 – Monday 10 August 2026",
        ),
        ("DTSTART;VALUE=DATE:20260808\r\nDURATION:P1D", "When: Saturday 8 August 2026"),
        ("DTSTART:20260414T100000Z\r\nDURATION:-PT1H", "When: Tuesday 14 April 2026 10:00 (UTC)"),
    ],
)
def test_an_event_timed_with_a_duration_says_when_it_ends(timing, when):
    """RFC 5545 lets an event give its DURATION instead of a DTEND (Google, booking systems):
    its end time was lost, 'When' said only when it starts."""
    data = (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//tests//EN\r\n"
        f"BEGIN:VEVENT\r\nUID:1\r\nSUMMARY:Review\r\n{timing}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    text, warning = extract_text("review.ics", ICS, data.encode())
    assert warning is None and text.splitlines() == ["Event: Review", when]
