"""A source's line in the Sources panel: sender · date · subject, the quoted mail marked (no app
needed)."""

from __future__ import annotations

from assistant.tui.messages import SourceView
from assistant.tui.widgets.sources import QUOTED, describe, is_quoted, mail_line

TILES = SourceView(
    2, "email", "Tiles", "Bram de Vries <bram@example.nl>", "2026-03-02T09:30", "<k2@x>"
)


def test_a_mail_is_one_line_sender_by_name_date_and_subject():
    assert mail_line(TILES.sender, TILES.date, TILES.title) == "Bram de Vries · 2026-03-02 · Tiles"
    assert mail_line("bram@example.nl", "", "Tiles") == "bram@example.nl · Tiles"
    assert mail_line("", "2026-03-02", "Plans", kind="note") == "note · 2026-03-02 · Plans"


def test_the_quoted_mail_is_marked_in_bold_others_are_plain():
    plain, quoted = describe(2, TILES), describe(2, TILES, quoted=True)
    assert plain.plain == "2. Bram de Vries · 2026-03-02 · Tiles" and "\n" not in plain.plain
    assert quoted.plain == plain.plain + QUOTED and "bold" in str(quoted.style)
    assert not plain.spans and not str(plain.style)


def test_the_quote_names_its_mail_by_id_or_by_chunk():
    assert is_quoted(TILES, {"id": "<k2@x>", "chunk_id": 7})  # another chunk of the same mail
    assert is_quoted(TILES, {"id": None, "chunk_id": 2})
    assert not is_quoted(TILES, {"id": "<k1@x>", "chunk_id": 1})
    assert not is_quoted(TILES, {}) and not is_quoted(TILES, None)
