"""mbox separators as mutt and notmuch read them: an envelope line splits, anything else is body."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.ingest import Document
from assistant.ingest.mbox import count_mbox, is_envelope, read_mbox


def _mail(i: int, body: str) -> bytes:
    return (
        f"From: a{i}@example.nl\nSubject: Mail {i}\nMessage-ID: <m{i}@example.nl>\n\n{body}\n"
    ).encode()


def _docs(path: Path) -> list[Document]:
    return [d for d in read_mbox(path) if isinstance(d, Document)]


@pytest.mark.parametrize(
    "line",
    [
        b"From x Thu Jan  1 00:00:00 2026\n",
        b"From - Thu Jan 01 00:00:00 2026\r\n",  # Thunderbird
        b"From 1738291283747@xxx Wed Feb 05 10:42:15 +0000 2025\n",  # Gmail Takeout
        b"From MAILER-DAEMON Fri Jul  8 12:08:34 2011\n",
        b"From bob@example.org Sat Jan  3 01:05:34 MET DST 1996\n",
        b"From Thu Jan  1 00:00:00 2026\n",  # no sender: mutt takes it
    ],
)
def test_envelopes_are_recognised(line):
    assert is_envelope(line)


@pytest.mark.parametrize(
    "line",
    [
        b"From the desk of Maya:\n",
        b"From tomorrow on we meet at 10:00 in 2026\n",
        b"From: a@example.nl\n",
        b">From x Thu Jan  1 00:00:00 2026\n",
        b"from x Thu Jan  1 00:00:00 2026\n",
    ],
)
def test_body_lines_are_not_envelopes(line):
    assert not is_envelope(line)


def test_messages_without_blank_lines_between_them_are_split(tmp_path):
    box = tmp_path / "tight.mbox"
    stamp = b"From sender@example.nl Thu Jan  1 00:00:00 2026\n"
    box.write_bytes(b"".join(stamp + _mail(i, f"Body {i}.") for i in range(4)))
    docs = _docs(box)
    assert [d.message_id for d in docs] == [f"m{i}@example.nl" for i in range(4)]
    assert [d.text for d in docs] == [f"Body {i}." for i in range(4)]
    assert count_mbox(box) == 4
    length = len(stamp) + len(_mail(0, "Body 0."))
    assert [d.source_offset for d in docs] == [i * length for i in range(4)]


def test_a_body_line_starting_with_from_stays_body_even_after_a_blank_line(tmp_path):
    body = "Hi,\n\nFrom the desk of Maya: the kitchen starts Monday.\n\nFrom 9:00 on, bring tea."
    box = tmp_path / "body.mbox"
    stamp = b"From sender@example.nl Thu Jan  1 00:00:00 2026\n"
    box.write_bytes(stamp + _mail(0, body) + b"\n" + stamp + _mail(1, "Second."))
    docs = _docs(box)
    assert [d.text for d in docs] == [body, "Second."]
    assert count_mbox(box) == 2


def test_escaped_from_lines_lose_one_level_of_escaping(tmp_path):
    body = ">From x Thu Jan  1 00:00:00 2026 was quoted\n>>From deeper"
    box = tmp_path / "escaped.mbox"
    box.write_bytes(b"From sender@example.nl Thu Jan  1 00:00:00 2026\n" + _mail(0, body))
    (doc,) = _docs(box)
    assert doc.text == "From x Thu Jan  1 00:00:00 2026 was quoted"
    assert doc.quoted == ">From deeper"  # a '>' line reads as a quote: kept apart, not lost


def test_a_text_note_starting_with_from_is_not_an_mbox(tmp_path):
    from assistant.ingest import detect_sources

    note = tmp_path / "letter.txt"
    note.write_text("From the desk of Maya\n\nRemember the tiles.")
    assert [s.kind for s in detect_sources(note)] == ["notes"]


@pytest.mark.parametrize(
    "line",
    [
        b"From alice@example.com Mon, 3 Jan 2005 10:00:00 +0000\n",  # RFC 2822 date
        b"From - Mon, 03 Jan 2005 10:00:00 +0000\r\n",
        b"From alice@example.com 3 Jan 2005 10:00:00 GMT\n",  # no weekday
        b"From MAILER-DAEMON Mon, 3 Jan 2005 10:00:00 -0500 (EST)\n",
        b"\xef\xbb\xbfFrom 1234567890@xxx Wed Jan 05 12:00:00 +0000 2011\n",  # BOM, then Takeout
    ],
)
def test_rfc_2822_dated_and_bom_prefixed_envelopes_are_recognised(line):
    assert is_envelope(line)


@pytest.mark.parametrize(
    "line",
    [
        b"From the desk of John\n",
        b"From here on we meet on Mon, 3 Jan 2005 10:00:00 +0000\n",  # more than one sender word
        b"From Amsterdam 3 Jan 2005 09:00:00 we fly to Lisbon\n",  # text after the date
        b"From 3 Jan 2005 10:00:00 on, the office is closed\n",
        b"From alice@example.com Mon, 3 Jan 2005\n",  # no time
    ],
)
def test_body_lines_with_rfc_2822_dates_are_not_envelopes(line):
    assert not is_envelope(line)


RFC_STAMPS = [
    b"From alice@example.com Mon, 3 Jan 2005 10:00:00 +0000\n",
    b"From - Tue, 04 Jan 2005 11:30:00 +0100\n",
    b"From bob@example.org 5 Jan 2005 09:15:00 GMT\n",
]


def test_an_mbox_with_rfc_2822_dated_from_lines_is_split(tmp_path):
    box = tmp_path / "rfc.mbox"
    box.write_bytes(b"\n".join(s + _mail(i, f"Body {i}.") for i, s in enumerate(RFC_STAMPS)))
    docs = _docs(box)
    assert [d.text for d in docs] == [f"Body {i}." for i in range(3)]
    assert count_mbox(box) == 3
    assert not any(d.warnings for d in docs)


def test_from_body_lines_in_an_rfc_2822_dated_mbox_stay_body(tmp_path):
    body = "We agreed.\nFrom here on we meet on Mondays.\n\nFrom the desk of John: tea at 4."
    box = tmp_path / "rfc-body.mbox"
    box.write_bytes(RFC_STAMPS[0] + _mail(0, body) + b"\n" + RFC_STAMPS[1] + _mail(1, "Second."))
    docs = _docs(box)
    assert [d.text for d in docs] == [body, "Second."]
    assert count_mbox(box) == 2


@pytest.mark.parametrize(
    "prefix", [b"\xef\xbb\xbf", b"\n\n", b"\r\n \n", b"\xef\xbb\xbf\n"], ids=repr
)
def test_a_bom_or_blank_lines_before_the_first_from_line_are_passed_over(tmp_path, prefix):
    from assistant.ingest import detect_sources

    stamp = b"From 1234567890@xxx Wed Jan 05 12:00:00 +0000 2011\n"  # Google Takeout
    box = tmp_path / "takeout.mbox"
    data = prefix + b"\n".join(stamp + _mail(i, f"Body {i}.") for i in range(3))
    box.write_bytes(data)
    assert [s.kind for s in detect_sources(box)] == ["mbox"]
    docs = _docs(box)
    assert [d.message_id for d in docs] == [f"m{i}@example.nl" for i in range(3)]
    assert not any(d.warnings for d in docs)
    assert count_mbox(box) == 3
    for doc in docs:  # each offset is where its From_ line starts: reading resumes there
        assert data[doc.source_offset :].removeprefix(b"\xef\xbb\xbf").startswith(stamp)
        (first, *_) = _docs_from(box, doc.source_offset)
        assert (first.message_id, first.source_offset) == (doc.message_id, doc.source_offset)


def test_a_bom_before_the_headers_of_a_file_without_from_lines_is_not_a_header(tmp_path):
    box = tmp_path / "saved"
    box.write_bytes(b"\xef\xbb\xbf" + _mail(0, "Alone."))
    (doc,) = _docs(box)
    assert (doc.sender, doc.title, doc.text) == ("a0@example.nl", "Mail 0", "Alone.")


def _docs_from(path: Path, start: int) -> list[Document]:
    return [d for d in read_mbox(path, start=start) if isinstance(d, Document)]
