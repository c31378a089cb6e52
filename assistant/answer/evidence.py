"""The evidence of an answer: the few sentences of the prompt's chunks that best match the
question (whether an answer's terms appear in its sources is assistant/answer/support.py).

The evidence lines go into the prompt between the last chunk and the question (the small model
copies from lines next to the question far better than from the whole context) and are shown
under the answer. How each way of choosing them measures: bench/results/evidence.json.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from assistant.answer.text import answer_kinds, asked_kinds, terms
from assistant.knowledge.store import ChunkRecord
from cache.protocols import Embedder
from cache.sentences import SentenceVectors, rounded


@dataclass(frozen=True)
class Evidence:
    """One sentence (or mail line) of a source chunk that answers the question."""

    chunk_id: int
    sentence: str


@dataclass(frozen=True)
class Mix:
    """The weights of a sentence's score: embedding cosine with the question; BM25 against the
    question (idf from the prompt's own sentences, scaled to the best one); holding the kind of
    answer asked for (a number for "how much", a date for "when", a name for "who"…); and the
    chunk's place in the prompt (first 1, last 0). The defaults were chosen on half A of the demo
    questions only; bench/evidence.py reports the other half and a holdout beside them."""

    cosine: float = 1.0
    bm25: float = 0.5
    answer_kind: float = 0.25
    rank: float = 0.1


DEFAULT = Mix()
COSINE = Mix(cosine=1.0, bm25=0.0, answer_kind=0.0, rank=0.0)
BM25 = Mix(cosine=0.0, bm25=1.0, answer_kind=0.0, rank=0.0)


# -- sentences --------------------------------------------------------------------------------

_HEADER = re.compile(r"^(From: .*\| Date: .*\| Subject: .*|Note: .*)$")
_QUOTE = re.compile(r"^\s*(?:>\s?)+")
_BULLET = re.compile(r"^\s*(?:[-*•·–]|\d{1,2}[.)]|[a-h][.)])\s+(?:\[[ xX]\]\s*)?")
_HEADING = re.compile(r"^\s*#{1,6}\s+")
_TABLE_RULE = re.compile(r"^\|?(?:\s*:?-{2,}:?\s*\|)+\s*:?-*:?\s*\|?$")
_FIELD = re.compile(r"^[^\W\d_][\w ()/'’-]{0,30}:\s+\S")  # "Room: Quarto Terraço"
_COLUMNS = re.compile(r"(?<=\S)(?: {2,}|\t)(?=\S)")  # "Booking reference  K7QX4M"
_SIGNATURE = re.compile(r"^--\s*$")
_GREETING = re.compile(
    r"^(hi|hello|hey|dear|hej|hoi|beste|morning|good morning|best|regards|kind regards|cheers|"
    r"thanks|thank you|groet|groetjes|met vriendelijke groet|kram|kramar|love)\b",
    re.IGNORECASE,
)
# a sentence ends at . ! or ? before a capital, a digit or a word with a digit ("v3 is …")
_BOUNDARY = re.compile(r"[.!?]+[\"'”’)\]]*\s+(?=[\"'“‘(\[*]?(?:[^\W_a-z]|[a-z]+\d))")
_ABBREVIATIONS = frozenset(
    "e.g i.e etc approx ca incl excl vs dr mr mrs ms st jr sr prof resp cf est dept inc ltd "
    "corp a.m p.m jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur "
    "fri sat sun vol ref bijv o.a z.b d.h usw tel fig".split()
)
_BEFORE_NUMBER = frozenset("no nr nos p pp art".split())  # "no. 5", but "I said no. Then"
WRAPPED = 55  # a mail line this long that stops mid-sentence was wrapped by the sender
ITEM_WORDS = 45  # a list item or table row up to this long stays one evidence line
SHORT = 3  # a sentence of this many words or fewer is kept with the next ("Sorry. I …")


def split_sentences(text: str) -> list[str]:
    """A chunk's sentences and lines, each on one line: the chunk's header line, quote markers,
    bullets, table bars, greetings and sign-offs dropped; wrapped mail lines joined; a list item
    or table row kept whole; "e.g.", "approx. 5", "9.30", "€1.250,00" and "v3.2" unbroken."""
    return [sentence for sentence, _ in _sentences_in_context(text)]


def _sentences_in_context(text: str) -> Iterator[tuple[str, str]]:
    """(sentence, context): the context is the heading above it and the line that introduced
    its list ("Stop criteria:"), which say what a bare "Day 7: 100%" is about."""
    heading = lead = ""
    first = text.split("\n", 1)[0]
    title = first[len("Note: ") :].strip().lower() if first.startswith("Note: ") else ""
    for kind, block in _blocks(text):
        if kind == "heading" or _is_title_line(kind, block):
            heading, lead = ("" if block.lower() == title else block), ""
            continue
        lead = lead if kind == "item" else ""
        sentences = list(_sentences(kind, block))
        context = f"{heading} {lead}".strip()
        if sentences and sentences[-1].endswith(":"):
            lead = sentences.pop()  # introduces what follows; says nothing by itself
        yield from ((s, context) for s in sentences if s.lower() != title)


def _is_title_line(kind: str, block: str) -> bool:
    """A short line without closing punctuation stands as a heading ("Repotting plan")."""
    return kind == "text" and len(block.split()) <= 6 and not block.endswith(tuple(".!?,;:"))


def _blocks(text: str) -> Iterator[tuple[str, str]]:
    """(kind, text) of each paragraph, list item, table row, heading or field line."""
    block: list[str] = []
    header: list[str] = []
    for line in _body_lines(text):
        kind = _line_kind(line)
        if kind == "rule":  # the row above it was the table's header
            header = _cells(block[0]) if block and _line_kind(block[0]) == "row" else header
            block = []
            continue
        if block and kind in ("text", "field") and _continues(block[-1], line):
            block.append(line)
            continue
        if block:
            yield _join(block, header)
        header = header if kind == "row" else []
        block = [] if kind == "blank" else [line]
    if block:
        yield _join(block, header)


def _body_lines(text: str) -> Iterator[str]:
    """The chunk's lines after its header line, without quote markers, up to a signature."""
    for i, line in enumerate(text.split("\n")):
        if i == 0 and _HEADER.match(line):
            continue
        quoted = _QUOTE.match(line)
        if quoted is None and _SIGNATURE.match(line):
            return
        yield (line[quoted.end() :] if quoted else line).rstrip()


def _line_kind(line: str) -> str:
    stripped = line.strip()
    if not stripped:
        return "blank"
    if _TABLE_RULE.match(stripped):
        return "rule"
    if stripped.startswith("|"):
        return "row"
    if _HEADING.match(line):
        return "heading"
    if _BULLET.match(line):
        return "item"
    if _COLUMNS.search(stripped) or (_FIELD.match(stripped) and len(stripped) < WRAPPED):
        return "field"
    return "text"


def _continues(previous: str, line: str) -> bool:
    """Whether `line` goes on with `previous`: indented under it, starting in lower case, or
    after a line the sender's mail program wrapped."""
    kind = _line_kind(previous)
    indented, lower = line[:1].isspace(), line.lstrip()[:1].islower()
    if kind in ("row", "heading", "field"):
        return kind == "field" and indented
    if indented or lower:
        return True
    if _line_kind(line) == "field":
        return False
    if previous.endswith((".", "!", "?")):
        return kind == "text"
    return len(previous) >= WRAPPED


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def _join(block: list[str], header: list[str]) -> tuple[str, str]:
    """One line of text for a block; a table row as "Column: cell; …" when it has a header."""
    kind, first = _line_kind(block[0]), block[0]
    if kind == "row":
        cells = _cells(first)
        if len(header) == len(cells):
            return kind, "; ".join(f"{h}: {c}" for h, c in zip(header, cells, strict=True) if c)
        return kind, " | ".join(c for c in cells if c)
    if kind == "field":
        first = _COLUMNS.sub(" | ", first.strip())
    first = _HEADING.sub("", _BULLET.sub("", first))
    joined = " ".join([first, *block[1:]]).replace("**", "").replace("`", "")
    return kind, " ".join(joined.split())


def _sentences(kind: str, block: str) -> Iterator[str]:
    if kind != "text" and len(block.split()) <= ITEM_WORDS:
        yield from _kept(block)
        return
    pending = ""
    for sentence in _split(block):
        pending = f"{pending} {sentence}".strip()
        if len(pending.split()) > SHORT:
            yield from _kept(pending)
            pending = ""
    yield from _kept(pending)


def _split(block: str) -> Iterator[str]:
    start = 0
    for match in _BOUNDARY.finditer(block):
        if not _is_abbreviation(block[start : match.start()], block[match.end() :]):
            yield block[start : match.end()].strip()
            start = match.end()
    yield block[start:].strip()


def _is_abbreviation(before: str, after: str) -> bool:
    words = before.split()
    if not words:
        return True
    word = words[-1].lstrip("(\"'“").rstrip(".").lower()
    if len(word) == 1 and word.isalpha():
        return True  # an initial: "H. Mulder"
    return word in _ABBREVIATIONS or (word in _BEFORE_NUMBER and after[:1].isdigit())


def _kept(sentence: str) -> Iterator[str]:
    """The sentence, unless it is only a greeting, a sign-off, a name or a lone number."""
    words = re.findall(r"[^\W\d_]{2,}", sentence)
    if len(words) < 2 and not (words and re.search(r"\d", sentence)):
        return
    if len(sentence.split()) > 4 or not _GREETING.match(sentence):
        yield sentence


# -- choosing the evidence --------------------------------------------------------------------


def select_evidence(
    question: str,
    question_vector: np.ndarray,
    records: Sequence[ChunkRecord],
    embedder: Embedder,
    limit: int = 2,
    mix: Mix = DEFAULT,
    stored: SentenceVectors | None = None,
) -> list[Evidence]:
    """The `limit` sentences of the prompt's chunks (`records`, in prompt order) that best
    answer `question`, best first. The sentences' vectors come from `stored` where it has them
    (chunk_vectors); without a store, one embed_batch call for all the sentences."""
    split = [list(_sentences_in_context(r.text)) for r in records]
    per_chunk = [_scored_texts(pairs) for pairs in split]
    rows = [
        (rank, r.chunk_id, sentence)
        for rank, (r, pairs) in enumerate(zip(records, split, strict=True))
        for sentence, _ in pairs
    ]
    if not rows or limit <= 0:
        return []
    scored = [text for texts in per_chunk for text in texts]  # with heading and list intro
    vectors = None
    if mix.cosine:
        vectors = (
            np.vstack([v for v in chunk_vectors(records, embedder, stored, per_chunk) if len(v)])
            if stored is not None
            else embedder.embed_batch(scored)
        )
    ranks = np.array([rank for rank, *_ in rows], dtype=np.float32)
    places = ranks / max(1, len(records) - 1)
    scores = score_sentences(question, question_vector, scored, vectors, places, mix)
    picked: dict[str, Evidence] = {}
    for i in np.argsort(-scores, kind="stable"):
        _, chunk_id, sentence = rows[i]
        picked.setdefault(" ".join(sentence.lower().split()), Evidence(chunk_id, sentence))
        if len(picked) == limit:
            break
    return list(picked.values())


def chunk_vectors(
    records: Sequence[ChunkRecord],
    embedder: Embedder,
    stored: SentenceVectors,
    per_chunk: Sequence[Sequence[str]] | None = None,
) -> list[np.ndarray]:
    """Each chunk's sentence vectors (one row per sentence, with its context), read from
    `stored`, else embedded one chunk per batch and stored: a chunk's vectors are the same
    whichever prompt it is in, and whether they were just computed or stored long ago."""
    if per_chunk is None:
        per_chunk = [_scored_texts(_sentences_in_context(r.text)) for r in records]
    keys = [hashlib.sha256(r.text.encode()).hexdigest()[:32] for r in records]
    found = stored.get(embedder.name, keys)
    out = []
    for key, texts in zip(keys, per_chunk, strict=True):
        if key not in found or len(found[key]) != len(texts):
            vectors = rounded(embedder.embed_batch(list(texts))) if texts else np.zeros((0, 0))
            if texts:
                stored.put(embedder.name, key, vectors)
            found[key] = vectors
        out.append(found[key])
    return out


def _scored_texts(pairs: Iterable[tuple[str, str]]) -> list[str]:
    """What a sentence is scored (and embedded) as: its context (heading, list intro), then it."""
    return [f"{context} {sentence}".strip() for sentence, context in pairs]


def score_sentences(
    question: str,
    question_vector: np.ndarray,
    texts: Sequence[str],
    vectors: np.ndarray | None,
    places: np.ndarray,
    mix: Mix,
) -> np.ndarray:
    """Each sentence's score under `mix`; `places` are the chunks' places in the prompt, from
    0 (first) to 1 (last); `vectors` may be None when the mix has no cosine weight."""
    scores = mix.rank * (1.0 - places)
    if mix.cosine and vectors is not None:
        scores = scores + mix.cosine * (vectors @ np.asarray(question_vector, dtype=np.float32))
    if mix.bm25:
        bm25 = bm25_scores(question, texts)
        scores = scores + mix.bm25 * bm25 / max(float(bm25.max()), 1e-9)
    kinds = asked_kinds(question)
    if mix.answer_kind and kinds:
        holds = [bool(kinds & answer_kinds(t, question)) for t in texts]
        scores = scores + mix.answer_kind * np.array(holds, dtype=np.float32)
    return scores


def bm25_scores(
    question: str, texts: Sequence[str], k1: float = 1.2, b: float = 0.75
) -> np.ndarray:
    """Okapi BM25 of each text for the question, with idf over the texts themselves."""
    docs = [Counter(terms(t)) for t in texts]
    query = set(terms(question))
    lengths = np.array([sum(d.values()) for d in docs], dtype=np.float32)
    norms = k1 * (1 - b + b * lengths / max(float(lengths.mean()), 1.0))
    out = np.zeros(len(docs), dtype=np.float32)
    for term in query:
        df = sum(term in d for d in docs)
        idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
        tf = np.array([d[term] for d in docs], dtype=np.float32)
        out += idf * tf * (k1 + 1) / (tf + norms)
    return out
