from __future__ import annotations

from datetime import UTC, datetime

from assistant.ingest.chunking import chunk_document, count_tokens
from assistant.ingest.types import Document


def _doc(text: str, kind: str = "email") -> Document:
    return Document(
        kind=kind,
        source_key="k",
        title="Offsite agenda",
        text=text,
        content_hash="h",
        source_path="p",
        sender="Tomás Ferreira <tomas@fernwood.nl>",
        date=datetime(2026, 9, 1, tzinfo=UTC),
    )


def test_short_mail_is_one_chunk_with_a_header_line():
    chunks = chunk_document(_doc("We meet in Utrecht on 17 September."))
    assert len(chunks) == 1
    header, body = chunks[0].text.split("\n", 1)
    assert header == "From: Tomás Ferreira | Date: 2026-09-01 | Subject: Offsite agenda"
    assert body == "We meet in Utrecht on 17 September."


def test_long_text_splits_on_boundaries_within_budget_and_loses_nothing():
    paragraphs = [
        " ".join(f"Sentence {p}.{s} talks about sensors and budgets." for s in range(12))
        for p in range(8)
    ]
    text = "\n\n".join(paragraphs)
    chunks = chunk_document(_doc(text), target_tokens=200, max_tokens=220)
    assert len(chunks) > 3
    assert all(c.token_count <= 220 for c in chunks)
    bodies = [c.text.split("\n", 1)[1] for c in chunks]
    assert " ".join(" ".join(bodies).split()) == " ".join(text.split())
    assert all(b.rstrip().endswith(".") for b in bodies)  # sentence boundaries
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))


def test_one_huge_word_run_is_still_split():
    chunks = chunk_document(_doc("word " * 2000), target_tokens=200, max_tokens=220)
    assert all(c.token_count <= 220 for c in chunks)
    assert sum(count_tokens(c.text.split("\n", 1)[1]) for c in chunks) == 2000


def test_note_header_and_hash_depend_on_text():
    a = chunk_document(_doc("Water the ficus weekly.", kind="note"))[0]
    b = chunk_document(_doc("Water the ficus daily.", kind="note"))[0]
    assert a.text.startswith("Note: Offsite agenda\n")
    assert a.content_hash != b.content_hash


def test_each_chunk_of_an_attached_file_names_the_file():
    rows = "\n\n".join(f"Item: part {i}; Cost: EUR {i * 100}; Supplier: Acme" for i in range(60))
    text = "Short body.\n\n[Attachment: costs.xlsx]\n" + rows + "\n\n[Attachment: a.txt]\nLast."
    chunks = chunk_document(_doc(text), target_tokens=200, max_tokens=220)
    lines = [c.text.split("\n")[1] for c in chunks]
    assert lines[0] == "Short body." and lines[-1] == "[Attachment: a.txt]"
    assert len(lines) > 4 and set(lines[1:-1]) == {"[Attachment: costs.xlsx]"}
    assert all(c.token_count <= 220 for c in chunks)
    kept = [c.text.split("\n", 2)[2] for c in chunks[1:-1]]
    assert " ".join(" ".join(kept).split()) == " ".join(rows.split())
