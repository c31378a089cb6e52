"""A folder of notes (ingest/notes.py): each file's text, whatever encoding Windows saved it in."""

from __future__ import annotations

import pytest

from assistant.ingest.notes import read_notes
from assistant.ingest.types import Document


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32", "utf-8-sig"])
def test_a_note_saved_with_a_byte_order_mark_is_read(tmp_path, encoding):
    """Notepad's "Unicode" (UTF-16 with a byte order mark) has a NUL byte in every other place:
    such a note was skipped as binary, its text never indexed."""
    text = "# Groceries\nMilk, eggs, and the key for Åsa's flat."
    data = text.encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data
    (tmp_path / "list.txt").write_bytes(data)
    [note] = read_notes(tmp_path)
    assert isinstance(note, Document)
    assert (note.title, note.text, note.replaced_chars) == ("Groceries", text, 0)


def test_a_binary_file_named_as_a_note_is_still_skipped(tmp_path):
    (tmp_path / "photo.txt").write_bytes(b"\x00\x01\x02JFIF" + bytes(range(256)))
    [issue] = read_notes(tmp_path)
    assert not isinstance(issue, Document) and "binary" in issue.reason
