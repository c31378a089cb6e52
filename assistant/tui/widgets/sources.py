"""The Sources panel: the chunks the latest answer used; Enter opens the whole message."""

from __future__ import annotations

from email.utils import parseaddr

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import ListItem, ListView, Static

from assistant.tui.messages import SourceView


def describe(index: int, source: SourceView) -> Text:
    """Title (subject or note title), then sender · date, then the passage."""
    name, address = parseaddr(source.sender)
    who = "note" if source.kind == "note" else name or address or source.sender
    text = Text()
    text.append(f"{index}. {source.title}\n", style="bold")
    text.append(f"{who} · {source.date[:10]}\n", style="dim")
    passage = " ".join(source.passage.split())
    text.append(passage[:140] + ("…" if len(passage) > 140 else ""))
    return text


class SourceItem(ListItem):
    def __init__(self, index: int, source: SourceView) -> None:
        super().__init__(Static(describe(index, source)))
        self.source = source


class SourcesPanel(Vertical):
    def compose(self) -> ComposeResult:
        yield Static("Sources", classes="panel-title")
        yield ListView(id="source-list")

    def show(self, sources: list[SourceView]) -> None:
        listing = self.query_one(ListView)
        listing.clear()
        listing.extend(SourceItem(i, s) for i, s in enumerate(sources, 1))
        listing.index = 0 if sources else None  # Enter opens the first without a move
        title = f"Sources ({len(sources)}) — Enter opens" if sources else "Sources"
        self.query_one(".panel-title", Static).update(title)

    @property
    def sources(self) -> list[SourceView]:
        return [item.source for item in self.query(SourceItem)]
