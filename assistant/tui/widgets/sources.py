"""The Sources panel: the mails the latest answer was read from, one line each (sender · date ·
subject), the quoted mail's line marked; Enter opens the whole message. The quote itself is in
the answer, shown once."""

from __future__ import annotations

from email.utils import parseaddr

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import ListItem, ListView, Static

from assistant.tui.messages import SourceView

QUOTED = " · quoted"  # after the quoted mail's line


def who(sender: str, kind: str = "email") -> str:
    """The sender's name (else address), "note" for a note."""
    name, address = parseaddr(sender or "")
    return "note" if kind == "note" or not sender else name or address or sender


def mail_line(sender: str, date: str, subject: str, kind: str = "email") -> str:
    """sender · date · subject, the sender by name."""
    parts = (who(sender, kind), (date or "")[:10], subject)
    return " · ".join(part for part in parts if part)


def describe(index: int, source: SourceView, quoted: bool = False) -> Text:
    line = mail_line(source.sender, source.date, source.title, source.kind)
    text = Text(f"{index}. {line}", style="bold" if quoted else "")
    text.append(QUOTED if quoted else "", style="bold")
    return text


class SourceItem(ListItem):
    def __init__(self, index: int, source: SourceView) -> None:
        self.number = index
        self.source = source
        self.quoted = False
        self.label = Static(describe(index, source))
        super().__init__(self.label)

    def mark(self, quoted: bool) -> None:
        self.quoted = quoted
        self.label.update(describe(self.number, self.source, quoted))
        self.set_class(quoted, "quoted")


class SourcesPanel(Vertical):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: list[SourceItem] = []
        self.quoted: dict | None = None  # the quoted mail (as QuoteFound.mail gives it)

    def compose(self) -> ComposeResult:
        yield Static("Sources", classes="panel-title")
        yield ListView(id="source-list")

    def clear(self) -> None:
        """A new question: no sources yet, nothing quoted."""
        self.quoted = None
        self.show([])

    def show(self, sources: list[SourceView]) -> None:
        listing = self.query_one(ListView)
        listing.clear()
        self.items = [SourceItem(i, s) for i, s in enumerate(sources, 1)]
        listing.extend(self.items)
        listing.index = 0 if sources else None  # Enter opens the first without a move
        title = f"Sources ({len(sources)}) — Enter opens" if sources else "Sources"
        self.query_one(".panel-title", Static).update(title)
        self.mark(self.quoted)

    def mark(self, mail: dict | None) -> None:
        """Mark the quoted mail's line (a QA-bank answer's quote may come before its sources:
        kept, and marked when they come)."""
        self.quoted = mail or None
        for item in self.items:
            item.mark(is_quoted(item.source, self.quoted))

    @property
    def sources(self) -> list[SourceView]:
        return [item.source for item in self.query(SourceItem)]


def is_quoted(source: SourceView, mail: dict | None) -> bool:
    if not mail:
        return False
    return source.mail == mail.get("id") or source.chunk_id == mail.get("chunk_id")
