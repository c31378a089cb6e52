"""The Sources panel: the chunks the latest answer used, those holding its evidence marked and
the evidence highlighted in the passage; Enter opens the whole message."""

from __future__ import annotations

import re
from collections.abc import Sequence
from email.utils import parseaddr
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import ListItem, ListView, Static

from assistant.tui.messages import SourceView

if TYPE_CHECKING:
    from assistant.answer.evidence import Evidence

PASSAGE = 140  # characters of a passage shown
LEAD = 30  # characters kept before evidence that lies further on
HIGHLIGHT = "bold reverse"


def find(sentence: str, passage: str) -> tuple[int, int] | None:
    """Where `sentence` is in `passage`, ignoring case and how whitespace runs (None: not in it)."""
    words = sentence.split()
    if not words:
        return None
    match = re.search(r"\s+".join(map(re.escape, words)), passage, re.IGNORECASE)
    return match.span() if match else None


def excerpt(passage: str, evidence: Sequence[str] = ()) -> Text:
    """The passage (whitespace collapsed) cut to about PASSAGE characters, each evidence sentence
    found in it highlighted; evidence beyond the cut is shown instead, each sentence with a few
    words before it, the parts left out marked "…"."""
    flat = " ".join(passage.split())
    spans = sorted(span for sentence in evidence if (span := find(sentence, flat)))
    text, shown = Text(), 0
    for a, b in _windows(flat, spans):
        text.append(("…" if not shown else " … ") if a > shown else "")
        offset = len(text) - a
        text.append(flat[a:b])
        for x, y in spans:
            if x < b and y > a:
                text.stylize(HIGHLIGHT, max(x, a) + offset, min(y, b) + offset)
        shown = b
    if shown < len(flat):
        text.append(" …" if flat[shown - 1] in ".!?" else "…")
    return text


def _windows(flat: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of `flat` to show: its start, or (when evidence lies beyond it) each evidence
    sentence from a word or two before it, overlapping parts merged."""
    if not spans or spans[-1][1] <= PASSAGE:
        return [(0, min(PASSAGE, len(flat)))]
    windows: list[tuple[int, int]] = []
    for a, b in spans:
        lead = _word_start(flat, max(0, a - LEAD), a)
        if windows and lead <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(b, windows[-1][1]))
        else:
            windows.append((lead, b))
    return windows


def _word_start(flat: str, i: int, limit: int) -> int:
    """The start of the first word that begins at or after `i` (`i` itself at the start of
    `flat` or when no word begins before `limit`)."""
    if i == 0 or flat[i - 1] == " ":
        return i
    space = flat.find(" ", i, limit)
    return space + 1 if space >= 0 else i


def describe(index: int, source: SourceView, evidence: Sequence[str] = ()) -> Text:
    """Title (subject or note title), then sender · date, then the passage; a source holding
    evidence says so after its date."""
    name, address = parseaddr(source.sender)
    who = "note" if source.kind == "note" else name or address or source.sender
    text = Text()
    text.append(f"{index}. {source.title}\n", style="bold")
    text.append(f"{who} · {source.date[:10]}", style="dim")
    text.append(" · evidence" if evidence else "", style="bold")
    text.append("\n")
    text.append_text(excerpt(source.passage, evidence))
    return text


class SourceItem(ListItem):
    def __init__(self, index: int, source: SourceView) -> None:
        self.number = index
        self.source = source
        self.evidence: list[str] = []  # the answer's evidence sentences from this source
        self.label = Static(describe(index, source))
        super().__init__(self.label)

    def show_evidence(self, sentences: list[str]) -> None:
        self.evidence = sentences
        self.label.update(describe(self.number, self.source, sentences))
        self.set_class(bool(sentences), "evidence")


class SourcesPanel(Vertical):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: list[SourceItem] = []

    def compose(self) -> ComposeResult:
        yield Static("Sources", classes="panel-title")
        yield ListView(id="source-list")

    def show(self, sources: list[SourceView]) -> None:
        listing = self.query_one(ListView)
        listing.clear()
        self.items = [SourceItem(i, s) for i, s in enumerate(sources, 1)]
        listing.extend(self.items)
        listing.index = 0 if sources else None  # Enter opens the first without a move
        title = f"Sources ({len(sources)}) — Enter opens" if sources else "Sources"
        self.query_one(".panel-title", Static).update(title)

    def show_evidence(self, evidence: list[Evidence]) -> None:
        """Mark the sources the answer's evidence comes from, highlighting the sentences."""
        for item in self.items:
            item.show_evidence([e.sentence for e in evidence if e.chunk_id == item.source.chunk_id])

    @property
    def sources(self) -> list[SourceView]:
        return [item.source for item in self.query(SourceItem)]
