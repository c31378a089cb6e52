from __future__ import annotations

from email import policy
from email.parser import BytesParser

import pytest

from assistant.ingest import emails
from assistant.ingest.emails import parse_email, read_message
from assistant.ingest.types import Document, Issue
from tests.conftest import make_email


def test_headers_thread_and_date_are_parsed():
    parent = make_email(msgid="<root.1@example.nl>")
    msg = make_email(
        subject="Re: Kitchen", msgid="<reply.2@example.nl>", in_reply_to="<root.1@example.nl>"
    )
    msg["Cc"] = "Elin <elin@example.se>"
    doc = parse_email(msg.as_bytes(), "box.mbox", offset=10, folder="INBOX")
    assert doc.message_id == "reply.2@example.nl"
    assert (doc.in_reply_to, doc.references) == ("root.1@example.nl", ["root.1@example.nl"])
    assert doc.sender == "Bram de Vries <bram@example.nl>"
    assert doc.cc == "Elin <elin@example.se>"
    assert doc.date.isoformat() == "2026-03-02T09:30:00+00:00"
    assert (doc.source_offset, doc.folder, doc.title) == (10, "INBOX", "Re: Kitchen")
    assert parse_email(parent.as_bytes(), "x").in_reply_to == ""


def test_quoted_tail_and_signature_are_kept_apart_not_lost():
    body = (
        "Monday works for us, we start demolition at 8.\n\n"
        "On Sun, 1 Mar 2026, Maya Lindqvist wrote:\n"
        "> Can you start on Monday?\n"
        "> Thanks\n\n"
        "-- \nBram de Vries\nDe Vries Bouw\n"
    )
    doc = parse_email(make_email(body=body).as_bytes(), "x")
    assert doc.text == "Monday works for us, we start demolition at 8."
    assert "> Can you start on Monday?" in doc.quoted
    assert "De Vries Bouw" in doc.quoted
    assert "wrote:" in doc.quoted


def test_html_only_mail_becomes_text():
    html = (
        "<html><body><p>Booking <b>XK7Q2P</b></p>"
        "<table><tr><td>Lisbon</td></tr></table></body></html>"
    )
    doc = parse_email(make_email(body=None, html=html).as_bytes(), "x")
    assert "XK7Q2P" in doc.text and "Lisbon" in doc.text
    assert "<" not in doc.text


def test_multipart_alternative_prefers_plain_and_lists_attachments():
    msg = make_email(
        body="Plain version with the quote attached.",
        html="<p>HTML version</p>",
        attachments=[("offerte.pdf", "application/pdf", b"%PDF-1.4 fake")],
    )
    doc = parse_email(msg.as_bytes(), "x")
    assert doc.text == "Plain version with the quote attached."
    assert [(a.name, a.content_type) for a in doc.attachments] == [
        ("offerte.pdf", "application/pdf")
    ]


def test_latin1_body_is_decoded():
    msg = make_email(body="Hej Maya! Bröllopet blir på Gränsö slott.", charset="iso-8859-1")
    raw = msg.as_bytes()
    assert "Bröllopet".encode("iso-8859-1") in raw or b"=F6" in raw
    doc = parse_email(raw, "x")
    assert "Bröllopet blir på Gränsö slott." in doc.text
    assert doc.replaced_chars == 0


def test_raw_8bit_headers_are_read_as_latin1_unless_utf8():
    latin1 = "From: André <andre@example.fr>\nSubject: Café crème\n".encode("cp1252")
    utf8 = "To: Åsa Berg <asa@example.se>\nMessage-ID: <h8@x>\n\nbody\n".encode()
    doc = parse_email(latin1 + utf8, "x")
    assert (doc.title, doc.sender) == ("Café crème", "André <andre@example.fr>")
    assert doc.recipients == "Åsa Berg <asa@example.se>"


def test_unknown_charset_is_decoded_with_a_warning():
    raw = (
        b"From: a@example.nl\nSubject: odd\nMessage-ID: <odd.1@x>\n"
        b"Content-Type: text/plain; charset=x-klingon\n\ncaf\xe9 \xff\xfe ok\n"
    )
    doc = parse_email(raw, "x")
    assert doc.text.startswith("café")
    assert any("unknown charset" in w for w in doc.warnings)


def test_a_charset_label_that_is_no_text_encoding_is_read_as_text_with_a_warning():
    """'charset=quoted-printable' (the transfer encoding in the wrong field), 'base64', 'idna',
    'undefined': Python knows the name, but not as a text encoding; the mail is still read."""
    for label in ("quoted-printable", "base64", "idna", "undefined", "hex"):
        raw = (
            b"From: a@example.nl\nSubject: mixed up\nMessage-ID: <mix.1@x>\n"
            b"Content-Type: text/plain; charset=" + label.encode() + b"\n\ncaf\xc3\xa9 ok\n"
        )
        doc = parse_email(raw, "x")
        assert doc.text.startswith("café ok"), label
        assert any(label in w and "decoded as UTF-8" in w for w in doc.warnings), label


def test_undecodable_bytes_are_replaced_and_counted():
    raw = (
        b"From: a@example.nl\nSubject: bad utf8\nMessage-ID: <bad.1@x>\n"
        b"Content-Type: text/plain; charset=utf-8\n\nhello \xff\xfe world\n"
    )
    doc = parse_email(raw, "x")
    assert doc.replaced_chars == 2
    assert "hello" in doc.text and "world" in doc.text


def test_garbage_is_an_issue_naming_the_file():
    item = read_message(bytes(range(256)) * 8, "/mail/cur/junk", "")
    assert isinstance(item, Issue)
    assert item.path == "/mail/cur/junk" and "not an email" in item.reason


def test_message_without_message_id_gets_a_stable_content_key():
    msg = make_email()
    del msg["Message-ID"]
    a = read_message(msg.as_bytes(), "x", "")
    b = read_message(msg.as_bytes(), "y", "")
    assert isinstance(a, Document) and a.source_key.startswith("sha256:")
    assert a.source_key == b.source_key


def test_html_tables_lose_their_layout_padding():
    html = (
        "<table><tr><td>Flight</td><td>TP 663 Amsterdam - Lisbon</td></tr>"
        "<tr><td>Booking reference</td><td>XK7Q2P</td></tr></table><p>Thanks</p>"
    )
    text = parse_email(make_email(body=None, html=html).as_bytes(), "x").text
    assert "Booking reference  XK7Q2P" in text
    assert "   " not in text


def test_list_and_bulk_headers_mark_the_mail():
    def mark(**headers: str) -> str:
        msg = make_email()
        for name, value in headers.items():
            msg[name.replace("_", "-")] = value
        return parse_email(msg.as_bytes(), "x").bulk

    assert mark() == ""
    assert mark(List_Id="<smu-betas.example.org>") == "list"
    assert mark(List_Unsubscribe="<mailto:leave@example.org>") == "list"
    assert mark(Precedence="list") == "list"
    assert mark(Precedence="Bulk") == mark(Precedence="junk") == "bulk"
    assert mark(Auto_Submitted="auto-generated") == "auto"
    assert mark(Auto_Submitted="no") == ""


def test_headers_read_as_the_default_policy_reads_them_each_parsed_once():
    raw = (
        b"From: =?utf-8?q?Ma=C3=AFa?= Lindqvist <maya@example.se>\n"
        b'To: "Vries, Bram de" <bram@example.nl>, team: a@example.nl, b@example.nl;\n'
        b"Cc: undisclosed-recipients:;\n"
        b"Subject: =?iso-8859-1?q?caf=E9?= plans\n"
        b"Date: Mon, 2 Mar 2026 09:30:00 +0100\n"
        b"Message-ID: <a.1@example.nl>\n"
        b'Content-Type: text/plain; charset="utf-8"; format=flowed\n\n'
        b"Body.\n"
    )
    ours, stdlib = emails._parse(raw), BytesParser(policy=policy.default).parsebytes(raw)
    assert [str(ours[k]) for k in stdlib] == [str(stdlib[k]) for k in stdlib]
    assert ours["To"].addresses == stdlib["To"].addresses
    assert ours.get_params() == stdlib.get_params()
    assert ours["Content-Type"] is ours["Content-Type"]  # parsed once, not at every read


def test_hebrew_outlooks_charset_label_reads_in_headers_and_body():
    """iso-8859-8-i (Outlook's label on Hebrew mail) and unknown-8bit are not Python's names:
    the sender's name, the subject and the body came out as U+FFFD or Windows-1252, uncounted."""
    raw = (
        b"From: =?iso-8859-8-i?Q?=F9=EC=E5=ED?= <a@example.nl>\n"
        b"Subject: =?unknown-8bit?Q?Caf=E9?=\nMessage-ID: <he.1@x>\n"
        b"Content-Type: text/plain; charset=iso-8859-8-i\n\n\xf9\xec\xe5\xed ok\n"
    )
    doc = parse_email(raw, "x")
    assert doc.sender.startswith("\u05e9\u05dc\u05d5\u05dd") and doc.title == "Caf\u00e9"
    assert doc.text.startswith("\u05e9\u05dc\u05d5\u05dd ok") and not doc.warnings


def test_a_mail_whose_date_cannot_be_read_is_dated_by_its_first_server():
    """No Date, or one that is no date ('2026-01-01 10:00:00', an offset that overflows): the
    mail was undated (in no date: search, last in the night's plan), or skipped whole for the
    overflow. The first server's Received date stands in; with none, it stays undated."""
    received = (
        b"Received: from mx by inbox; Tue, 5 Mar 2019 10:00:02 +0000\n"
        b"Received: from laptop by mx; Tue, 5 Mar 2019 10:00:00 +0000\n"
    )
    for date in (b"", b"Date: 2026-01-01 10:00:00\n",
                 b"Date: Mon, 1 Jan 2020 00:00:00 +99999999999999999999\n"):  # fmt: skip
        raw = b"From: a@example.nl\nSubject: s\nMessage-ID: <d.1@x>\n" + date + received + b"\nhi\n"
        doc = parse_email(raw, "x")
        assert doc.date is not None and doc.date.isoformat() == "2019-03-05T10:00:00+00:00"
    assert (
        parse_email(b"From: a@example.nl\nSubject: s\nMessage-ID: <d.2@x>\n\nhi\n", "x").date
        is None
    )


@pytest.mark.parametrize(
    ("plain", "kept"),
    [(b"Your email client cannot display this message.", "html"), (b"", "html"),
     (b"Your flight KL1234 departs at 09:40.", "plain")],
)  # fmt: skip
def test_a_stub_or_empty_plain_part_gives_way_to_the_html_beside_it(plain, kept):
    """The plain alternative was always read, so a stub ("cannot display this message") or an
    empty one hid the HTML that holds the mail; a plain text that renders the HTML is kept."""
    raw = (
        b"From: a@x.org\nSubject: Flight\nMessage-ID: <fl.1@x>\nMIME-Version: 1.0\n"
        b'Content-Type: multipart/alternative; boundary="B"\n\n--B\nContent-Type: text/plain\n\n'
        + plain
        + b"\n--B\nContent-Type: text/html\n\n<html><body><p>Your flight KL1234 departs"
        b" at 09:40 from gate D7.</p></body></html>\n--B--\n"
    )
    text = parse_email(raw, "x").text
    assert text == ("Your flight KL1234 departs at 09:40 from gate D7." if kept == "html"
                    else plain.decode())  # fmt: skip


def test_text_written_around_an_inline_image_is_read_whole():
    """Apple Mail sends a mail written around an inline image as text, image, text: only the
    first text was read, the rest lost. The parts of an alternative group are not added."""
    raw = (
        b"From: a@x.org\nSubject: Contract\nMessage-ID: <ap.1@x>\nMIME-Version: 1.0\n"
        b'Content-Type: multipart/mixed; boundary="B"\n\n'
        b"--B\nContent-Type: text/plain\n\nHere is the contract.\n"
        b'--B\nContent-Type: image/jpeg; name="scan.jpg"\nContent-Disposition: inline; '
        b'filename="scan.jpg"\nContent-Transfer-Encoding: base64\n\n/9j/4AAQ\n'
        b"--B\nContent-Type: text/plain\n\nPlease sign page 3 by Friday.\n--B--\n"
    )
    doc = parse_email(raw, "x")
    assert doc.text == "Here is the contract.\n\nPlease sign page 3 by Friday."
    assert [a.name for a in doc.attachments] == ["scan.jpg"]
