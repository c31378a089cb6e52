"""Bounded parts: a huge text part is cut, binary and base64-like text never reach the index."""

from __future__ import annotations

import base64
import random

from assistant.config_sections import ChunkingSettings
from assistant.importing.importer import Importer
from assistant.ingest.bounds import bound_text, looks_binary
from assistant.ingest.emails import parse_email
from tests.conftest import make_email, write_mbox

PROSE = "The tiler comes on Monday at nine; the grout is the grey one we chose.\n"


def _raw(body: bytes, ctype: str = "text/plain; charset=utf-8", cte: str = "8bit") -> bytes:
    head = (
        "From: a@example.nl\nSubject: part\nMessage-ID: <part@x>\n"
        f"MIME-Version: 1.0\nContent-Type: {ctype}\nContent-Transfer-Encoding: {cte}\n\n"
    )
    return head.encode() + body


def test_a_text_part_over_the_cap_is_cut_at_a_line_end_with_a_warning():
    doc = parse_email(_raw(PROSE.encode() * 2000), "x", max_part_bytes=10_000)
    assert 9_000 < len(doc.text) <= 10_000 and doc.text.endswith("one we chose.")
    assert any("cut to its first" in w for w in doc.warnings)


def test_a_binary_text_part_is_kept_as_a_message_but_not_indexed():
    garbage = random.Random(1).randbytes(50_000)
    doc = parse_email(_raw(garbage, "text/plain; charset=iso-8859-1"), "x")
    assert doc.text == "" and doc.title == "part" and doc.replaced_chars == 0
    assert any("binary data; not indexed" in w for w in doc.warnings)


def test_base64_pasted_into_a_body_is_left_out_and_the_prose_kept():
    blob = base64.encodebytes(random.Random(2).randbytes(30_000)).decode()
    doc = parse_email(_raw(f"{PROSE}\n{blob}\nRegards, Maya\n".encode()), "x")
    assert doc.text.split() == f"{PROSE} Regards, Maya".split()
    assert any("base64-like text left out" in w for w in doc.warnings)


def test_short_codes_and_ordinary_text_are_not_touched():
    text = f"{PROSE}Checksum:\n{'ab12' * 16}\nIBAN NL91ABNA0417164300\n\tTabbed line\f\n"
    assert bound_text(text) == (text, [])
    assert not looks_binary("hello \ufffd\ufffd world")  # mislabelled text is not binary


def test_a_base64_attachment_declared_as_text_is_not_indexed():
    payload = base64.b64encode(random.Random(3).randbytes(200_000))  # one long line
    doc = parse_email(_raw(payload), "x")
    assert doc.text == "" and any("base64-like" in w for w in doc.warnings)


def test_a_message_yields_at_most_max_chunks(tmp_path, store, fake_embedder):
    long = make_email(subject="Minutes", body="\n\n".join([PROSE * 12] * 40), msgid="<long@x>")
    box = write_mbox(tmp_path / "long.mbox", [long, make_email(body=PROSE, msgid="<short@x>")])
    importer = Importer(store, fake_embedder, ChunkingSettings(max_chunks=5, max_part_mb=1.0))
    report = importer.run([box])
    assert report.chunks_added == 5 + 1
    assert any("only the first 5 are indexed" in w.reason for w in report.warnings)
    body = store.db.execute("SELECT body FROM documents WHERE message_id = 'long@x'").fetchone()[0]
    assert body.count("tiler") == 12 * 40  # the whole text is stored


def test_a_huge_note_is_cut(tmp_path, store, fake_embedder):
    (tmp_path / "log.txt").write_text(PROSE * 30_000)
    importer = Importer(store, fake_embedder, ChunkingSettings(max_part_mb=0.05, max_chunks=1000))
    report = importer.run([tmp_path / "log.txt"])
    body = store.db.execute("SELECT body FROM documents").fetchone()[0]
    assert 45_000 < len(body) <= 50_000
    assert any("cut to its first" in w.reason for w in report.warnings)
