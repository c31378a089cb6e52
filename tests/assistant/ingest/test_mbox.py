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
