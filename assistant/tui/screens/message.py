"""The whole message (or note) a source comes from, over the chat; Escape closes it."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static


def render_document(doc: dict) -> Text:
    text = Text()
    if doc["kind"] == "note":
        text.append(f"{doc['title']}\n", style="bold")
        text.append(f"note · {doc['source_path']}\n\n", style="dim")
    else:
        text.append(f"Subject: {doc['title']}\n", style="bold")
        for label, key in (("From", "sender"), ("To", "recipients"), ("Cc", "cc")):
            if doc[key]:
                text.append(f"{label}: {doc[key]}\n")
        text.append(f"Date: {doc['date']}\n", style="dim")
        for a in doc["attachments"]:
            text.append(f"Attachment: {a['name']} ({a['content_type']}, {a['size']} bytes)\n")
        text.append("\n")
    text.append(doc["body"])
    if doc["quoted"]:
        text.append(f"\n\n{doc['quoted']}", style="dim")
    return text


class MessageScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape", "app.pop_screen", "Close")]

    def __init__(self, doc: dict) -> None:
        super().__init__()
        self.doc = doc

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="message"):
            yield Static(render_document(self.doc), id="message-text")
        yield Footer(show_command_palette=False)
