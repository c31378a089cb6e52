"""The question field: one line, as a question is sent with Enter."""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class QuestionInput(Input):
    """A pasted question keeps all its words: Input keeps the first line of a paste only, so a
    question copied across lines (from a mail, a note) was cut at its first line break, and one
    copied with a line break first was pasted as nothing."""

    def _on_paste(self, event: events.Paste) -> None:
        text = " ".join(event.text.split())
        if text:
            if self.selection.is_empty:
                self.insert_text_at_cursor(text)
            else:
                self.replace(text, *self.selection)
        event.stop()
