"""~200-token chunks on paragraph and sentence boundaries; each carries a header line so that it
stands alone in a prompt (From, Date, Subject for mail; the title for a note). A mail's attached
files are chunked apart from its body and from each other, and each chunk of one starts with the
line naming its file (`[Attachment: name]`), wherever in the file it begins."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from assistant.ingest.attachments import SECTION_START
from assistant.ingest.emails import display_name
from assistant.ingest.types import Document

_TOKEN = re.compile(r"\w+|[^\w\s]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[A-Z0-9ÅÄÖØÆÉ])")
_PARAGRAPH = re.compile(r"\n\s*\n")


@dataclass(frozen=True)
class Chunk:
    ordinal: int
    text: str
    token_count: int
    content_hash: str


def count_tokens(text: str) -> int:
    """A fast estimate of subword tokens: words and punctuation marks (within ~15% of WordPiece
    for English prose; chunks stay well under the embedder's 256-token window)."""
    return len(_TOKEN.findall(text))


def header_line(doc: Document) -> str:
    if doc.kind == "note":
        return f"Note: {doc.title}"
    date = doc.date.strftime("%Y-%m-%d") if doc.date else "unknown date"
    return f"From: {display_name(doc.sender)} | Date: {date} | Subject: {doc.title}"


def chunk_document(doc: Document, target_tokens: int = 200, max_tokens: int = 220) -> list[Chunk]:
    header = header_line(doc)
    bodies = []
    for label, text in _sections(doc.text):
        head = f"{header}\n{label}" if label else header
        budget = max(20, target_tokens - count_tokens(head))
        limit = max(budget, max_tokens - count_tokens(head))
        bodies += [f"{head}\n{body}" for body in _pack(_pieces(text, limit), budget)]
    bodies = bodies or [header]
    return [_make_chunk(i, body.strip()) for i, body in enumerate(bodies)]


def _sections(text: str) -> Iterator[tuple[str, str]]:
    """(label, text): the body (no label), then each attached file's section under its header
    line (ingest/attachments.py)."""
    starts = [m.start() for m in SECTION_START.finditer(text)]
    yield "", text[: starts[0] if starts else len(text)]
    for start, end in zip(starts, [*starts[1:], len(text)], strict=False):
        label, _, body = text[start:end].partition("\n")
        yield label, body


def _make_chunk(ordinal: int, text: str) -> Chunk:
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return Chunk(ordinal, text, count_tokens(text), digest)


def _pieces(text: str, limit: int) -> Iterator[str]:
    """Paragraphs; a paragraph over `limit` tokens becomes sentences; a sentence over it, words."""
    for para in _PARAGRAPH.split(text):
        para = para.strip()
        if not para:
            continue
        if count_tokens(para) <= limit:
            yield para
            continue
        for sentence in _SENTENCE_END.split(para):
            yield from (
                _split_words(sentence, limit) if count_tokens(sentence) > limit else [sentence]
            )


def _split_words(text: str, limit: int) -> Iterator[str]:
    return _greedy(text.split(), limit, " ")


def _pack(pieces: Iterator[str], budget: int) -> Iterator[str]:
    return _greedy(pieces, budget, "\n\n")


def _greedy(items: Iterable[str], budget: int, sep: str) -> Iterator[str]:
    """Greedily join items with `sep` into runs of at most `budget` tokens (a lone larger item
    stays whole): words into a piece, pieces into a chunk."""
    current: list[str] = []
    size = 0
    for item in items:
        n = count_tokens(item)
        if current and size + n > budget:
            yield sep.join(current)
            current, size = [], 0
        current.append(item)
        size += n
    if current:
        yield sep.join(current)
