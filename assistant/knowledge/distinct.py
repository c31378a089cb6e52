"""Near-duplicate chunks take one prompt slot; the next distinct chunk takes the freed one.

A mailbox holds one text several times: a list copy of a mail (the list's subject tag, the same
body), a resent mail, a forward, a reply that quotes its parent without "> " markers (Outlook).
`distinct` walks the fused hits best first and keeps a hit unless it
is a near-duplicate of one kept already:

- same text: the same words after dropping the chunk's header line (From | Date | Subject, or
  Note: title; folder and list copies differ there), quote markers, punctuation and case. A body
  under MIN_WORDS words keeps its header: "Thanks!" from Bram and from Elin are two messages.
- containment: at least CONTAINED of the smaller chunk's word shingles are in the other chunk
  (not judged for a body under MIN_WORDS words: its shingles would be mostly header).
  Both text rules also need the subjects to agree (one's words among the other's: a list tag,
  "Re:" or "Fwd:" may be added): two calendar invitations end in the same boilerplate chunk,
  and there the subject line is the one thing that tells them apart.
- dense cosine at or above the bound measured for the embedder (COSINE_BOUNDS; measured by
  bench/studies/distinct.py, figures in bench/results/distinct.json). An embedder without a measured
  bound gets the text rules only.

Which copy keeps the slot: the better-ranked one, in the better-ranked position, except when the
better-ranked chunk is contained in the other and the other adds words of its own (NOVEL or more
shingles) while it adds none: a forward with a note above the mail, a reply with one new line
above its quoted parent. Then the superset takes the slot. It holds all of the better-ranked
chunk's text plus the new line, and the new line may be what answers the question ("Gert shuts
the water off at 07:45" is in the reply, not in the quoted mail). Keeping the better-ranked
parent would drop that line; keeping both spends two of the prompt's few slots on one text. The
price is a somewhat longer chunk and a source that is the reply rather than the mail it quotes.
Copies (neither adds NOVEL shingles) keep the one imported first, the lowest chunk id, in the
better-ranked position: which copy ranks higher hangs on header noise (a date, a list tag), so
this stable choice costs nothing, puts the original mail rather than its resend in the prompt,
and gives every question that retrieves the text the same chunk, whose KV the tree holds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from assistant.knowledge.encoder import INT8_SUFFIX
from assistant.knowledge.retrieval import Hit, Retriever

SHINGLE = 3  # words per shingle
CONTAINED = 0.8  # share of the smaller chunk's shingles found in the other: a duplicate
NOVEL = 4  # shingles a chunk must add to the other to count as adding text of its own
MIN_WORDS = 10  # a body shorter than this is compared with its header line, by same text only
SPARE = 5  # fused hits fetched beyond the slots, to fill the slots that duplicates free
# Cosine bound per embedder name: bench/studies/distinct.py, figures in bench/results/distinct.json
# (float) and distinct_int8.json (int8 weights)
COSINE_BOUNDS: dict[str, float] = {
    "all-MiniLM-L6-v2": 0.95,
    "all-MiniLM-L6-v2" + INT8_SUFFIX: 0.95,
}

_HEADER = re.compile(r"From: .* \| Date: .* \| Subject: (?P<subject>.*)|Note: (?P<title>.*)")
_WORD = re.compile(r"\w+")  # punctuation and quote markers (">", ">>") are not words


@dataclass(frozen=True)
class Shape:
    """What the duplicate rules compare: the normalised words and their shingles."""

    words: tuple[str, ...]
    shingles: frozenset[tuple[str, ...]]
    subject: frozenset[str]  # the header's subject or note title (none: no header line)
    short: bool  # a body under MIN_WORDS words: its words include the header's


def shape(text: str) -> Shape:
    header = _HEADER.fullmatch(text.partition("\n")[0])
    words, short = compared_words(text)
    n = min(SHINGLE, len(words)) or 1
    shingles = frozenset(words[i : i + n] for i in range(len(words) - n + 1))
    subject = (header.group("subject") or header.group("title") or "") if header else ""
    return Shape(words, shingles, frozenset(_WORD.findall(subject.lower())), short)


def compared_words(text: str) -> tuple[tuple[str, ...], bool]:
    """The chunk's words the rules compare, and whether its body is short: the body's words
    after the header line, or for a body under MIN_WORDS words the whole text's."""
    first, _, body = text.partition("\n")
    words = tuple(_WORD.findall(body.lower())) if _HEADER.fullmatch(first) else ()
    short = len(words) < MIN_WORDS
    return (tuple(_WORD.findall(text.lower())) if short else words), short


def duplicates(a: Shape, b: Shape) -> bool:
    """Subjects that agree, and the same words or the smaller chunk's shingles (nearly) all in
    the other."""
    if not (a.subject <= b.subject or b.subject <= a.subject):
        return False
    if a.words == b.words:
        return True
    if a.short or b.short:
        return False
    small = min(len(a.shingles), len(b.shingles))
    return len(a.shingles & b.shingles) >= CONTAINED * small


def novel(a: Shape, b: Shape) -> int:
    """How many of `a`'s shingles `b` lacks."""
    return len(a.shingles - b.shingles)


def takes_over(new: tuple[Hit, Shape], old: tuple[Hit, Shape]) -> bool:
    """A duplicate `new` takes `old`'s slot: it holds `old`'s text and adds some of its own, or
    the two are copies and `new` was imported first."""
    if novel(old[1], new[1]) >= NOVEL:
        return False
    return novel(new[1], old[1]) >= NOVEL or new[0].chunk_id < old[0].chunk_id


def close(a: int, b: int, vectors: Mapping[int, np.ndarray], bound: float | None) -> bool:
    """Dense cosine of chunks `a` and `b` at or above `bound` (vectors are unit length)."""
    if bound is None or a not in vectors or b not in vectors:
        return False
    return float(vectors[a] @ vectors[b]) >= bound


def distinct(
    hits: Sequence[Hit],
    k: int,
    vectors: Mapping[int, np.ndarray] | None = None,
    bound: float | None = None,
) -> list[Hit]:
    """The first `k` of `hits` (best first) of which no two are near-duplicates."""
    kept: list[tuple[Hit, Shape]] = []
    for hit in hits:
        _place(kept, (hit, shape(hit.record.text)), vectors or {}, bound)
    return [hit for hit, _ in kept[:k]]


def _place(
    kept: list[tuple[Hit, Shape]],
    new: tuple[Hit, Shape],
    vectors: Mapping[int, np.ndarray],
    bound: float | None,
) -> None:
    for i, (hit, form) in enumerate(kept):
        if duplicates(form, new[1]) or close(hit.chunk_id, new[0].chunk_id, vectors, bound):
            if takes_over(new, kept[i]):
                kept[i] = new
                kept[i + 1 :] = [e for e in kept[i + 1 :] if not duplicates(e[1], new[1])]
            return
    kept.append(new)


def distinct_hits(hits: Sequence[Hit], k: int, retriever: Retriever) -> list[Hit]:
    """`distinct` with the retriever's dense vectors and its embedder's cosine bound."""
    bound = COSINE_BOUNDS.get(retriever.embedder.name)
    vectors = retriever.vectors([h.chunk_id for h in hits]) if bound is not None else {}
    return distinct(hits, k, vectors, bound)
