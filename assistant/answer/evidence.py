"""The mail's own lines that answer a question: every line of the prompt's chunks (answer/lines.py)
is scored, and the SHOWN best lines of at most two mails are what the user sees: the best line's
mail's lines among them are the quote, shown first with its answer span marked, and the other
mail's its 'also' lines; a score under a calibrated bar is "not found".

A line's score is a logistic fusion of its features (FEATURES): cosine with the question, its
neighbour's cosine, BM25 over the candidate lines, the share of the question's terms it holds,
holding a term of the kind asked for (a date for "when", an amount for "how much" …), its mail's
retrieval rank, being short, and the model's pointer (not built yet: its column is 0, so its
weight fits to 0). The weights and the two bars are fitted on questions the model wrote about
lines of a mailbox (answer/fit.py), never on an evaluation set; `LineWeights.load` reads a
home's own fit.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from assistant.answer.line_scores import bm25_scores, neighbours
from assistant.answer.lines import Line, mail_lines, split_sentences
from assistant.answer.quoted import answer_span, clipped, line_key, window
from assistant.answer.text import (
    answer_kinds,
    asked_cues,
    asked_forms,
    asked_kinds,
    form_spans,
    holds_cue,
    kind_spans,
    terms,
)
from assistant.knowledge.store import ChunkRecord
from cache.protocols import Embedder
from cache.sentences import SentenceVectors, rounded

__all__ = ["Evidence", "Found", "LineFinder", "LineWeights", "prompt_records", "split_sentences"]

FEATURES = ("cosine", "near", "bm25", "cover", "kind", "rank", "short", "pointer")
ALSO = 0.5  # another mail's lines are shown too when they score this share of the best
# lines shown in all: a first line that misses has the facts next to it (evidence_lines_*.json)
SHOWN = 3
LINES_VERSION = "lines-8"  # salts the stored line vectors' keys when the splitter changes


@dataclass(frozen=True)
class Evidence:
    """One line of a source chunk that answers the question."""

    chunk_id: int
    sentence: str  # as shown: a long line's window that answers (quoted.window)


@dataclass(frozen=True)
class LineWeights:
    """The fusion's coefficients (one per feature of FEATURES), its bias, and the bars on the
    best line's probability: at or above `answer` the quote is the answer; at or above `weak` it
    is shown marked as possibly not answering; below, "not found"."""

    coef: tuple[float, ...]
    bias: float
    answer: float
    weak: float
    fitted_on: str = ""

    def probability(self, x: np.ndarray) -> np.ndarray:
        z = x @ np.asarray(self.coef, dtype=np.float32) + self.bias
        return 1.0 / (1.0 + np.exp(-z))

    def band(self, p: float) -> str:
        return "answer" if p >= self.answer else "weak" if p >= self.weak else "none"

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=1), encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> LineWeights | None:
        """A home's own fit, or None when there is none (or it is unreadable, or for another
        set of features)."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            weights = cls(tuple(data["coef"]), data["bias"], data["answer"], data["weak"],
                          data.get("fitted_on", ""))  # fmt: skip
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return weights if len(weights.coef) == len(FEATURES) else None


# Fitted by bench/studies/fit_lines.py on questions the model wrote about lines of the demo mailbox
# (bench/results/line_weights.json); a home refits on its own mail at night (answer/fit.py).
DEFAULT_WEIGHTS = LineWeights(
    coef=(1.286, -1.023, 1.051, 0.928, 0.915, 0.423, -0.713, 0.000),
    bias=-1.186,
    answer=0.589,
    weak=0.529,
    fitted_on="demo mailbox",
)


@dataclass(frozen=True)
class Candidate:
    """A line of the prompt's chunks: its chunk, its mail's rank among the distinct mails, and
    its place in the chunk's lines."""

    record: ChunkRecord
    rank: int
    index: int
    line: Line


@dataclass
class Found:
    """What the mail says to a question: the quote's lines (one mail's, at most SHOWN), the
    answer span inside them, the best line's probability and its band, the quoted chunk, the nearest
    mails (for "not found") and every candidate with its probability, best first."""

    lines: list[Evidence]
    span: str
    score: float
    band: str
    record: ChunkRecord | None
    nearest: list[ChunkRecord]
    ranked: list[tuple[Candidate, float]] = field(default_factory=list)
    # lines of one other mail that score at least ALSO of the quote's best and are among the
    # SHOWN best: shown under the quote's mail as a second reading (one mail's quote rarely
    # settles it alone)
    also: list[Evidence] = field(default_factory=list)
    also_record: ChunkRecord | None = None
    # the quote's lines as the QA bank keys them: each line's head (quoted.clipped), whatever the
    # question (a long line is shown where it answers it)
    keys: list[str] = field(default_factory=list)
    judged: str = ""  # "confirmed" by the reader (answer/judge.py); "": the sentence decides

    @property
    def not_found(self) -> bool:
        return self.band == "none"

    @property
    def text(self) -> str:
        return " ".join(e.sentence for e in self.lines)

    @property
    def best_line(self) -> str:
        """The best line (as quoted), "" when there is none."""
        return clipped(self.ranked[0][0].line.text) if self.ranked else ""

    def shown_records(self, records: Sequence[ChunkRecord]) -> list[ChunkRecord]:
        """Of `records` (in their order), the chunks a shown line stands in: the quote's and
        the other mail's; all of them when nothing is shown."""
        ids = {e.chunk_id for e in (*self.lines, *self.also)}
        shown = [r for r in records if r.chunk_id in ids]
        return shown or list(records)

    def evidence(self) -> list[tuple[int, str]]:
        """What the QA bank keeps of it: (chunk id, line), the best line first, then the
        quote's other line."""
        if not self.ranked:
            return []
        best = (self.ranked[0][0].record.chunk_id, self.best_line)
        keys = self.keys or [e.sentence for e in self.lines]
        keyed = [(e.chunk_id, key) for e, key in zip(self.lines, keys, strict=True)]
        return [best, *(e for e in keyed if e[1] != best[1])]


class LineFinder:
    """Scores the lines of a prompt's chunks for a question (no model: tens of milliseconds)."""

    def __init__(
        self,
        embedder: Embedder,
        stored: SentenceVectors | None = None,
        weights: LineWeights = DEFAULT_WEIGHTS,
    ) -> None:
        self.embedder, self.stored, self.weights = embedder, stored, weights

    def find(
        self,
        question: str,
        vector: np.ndarray,
        records: Sequence[ChunkRecord],
        weights: LineWeights | None = None,
    ) -> Found:
        weights = weights or self.weights
        candidates = candidates_of(records)
        nearest = distinct_mails(records)
        if not candidates:
            return Found([], "", 0.0, "none", None, nearest)
        x = self.features(question, vector, candidates)
        p = weights.probability(x)
        order = np.argsort(-p, kind="stable")
        ranked = [(candidates[int(i)], float(p[i])) for i in order]
        quote, also = shown_lines(ranked)
        forms = asked_forms(question)
        lacking = also and forms and not _holds_forms(question, quote, forms)
        if lacking and _holds_forms(question, also, forms):  # the amount or time is in the other
            ranked = _first(ranked, mail_key(also[0].record))
            quote, also = shown_lines(ranked)
        quote = whole_kind_shown(question, ranked, quote, also)
        best, score = ranked[0]
        lines = [_evidence(c, question) for c in quote]
        span = answer_span(" ".join(e.sentence for e in lines), question)
        band = weights.band(score)
        if band != "answer":  # under the bar: "not found" where the best mail lacks the kind
            mail = [c for c in candidates if mail_key(c.record) == mail_key(best.record)]
            band = "none" if lacks_kind(question, mail) else "weak"
        if band != "none" and lacks_kind(question, quote, strict=False):
            band = "none"  # the quote cannot be the answer: a "when" quote with no date …
        keys = [clipped(c.line.text) for c in quote]
        found = Found(lines, span, score, band, best.record, nearest, ranked, keys=keys)
        if band != "none" and also:
            found.also = [_evidence(c, question) for c in also]
            found.also_record = also[0].record
        return found

    def features(
        self,
        question: str,
        vector: np.ndarray,
        candidates: Sequence[Candidate],
    ) -> np.ndarray:
        """One row per candidate, one column per name in FEATURES."""
        texts = [c.line.scored for c in candidates]
        q = np.asarray(vector, dtype=np.float32)
        cosine = self.vectors(candidates) @ q
        near = neighbours([(c.record.chunk_id, c.index) for c in candidates], cosine)
        bm25 = bm25_scores(question, texts)
        asked = set(terms(question))
        cover = [len(asked & set(terms(t))) / len(asked) if asked else 0.0 for t in texts]
        kinds, cues = asked_kinds(question), asked_cues(question)
        kind = [
            bool(kinds & answer_kinds(c.line.text, question))
            or (bool(cues) and holds_cue(c.line.text, question, cues))
            for c in candidates
        ]
        ranks = max(c.rank for c in candidates)
        rank = [1.0 - c.rank / ranks if ranks else 1.0 for c in candidates]
        short = [len(c.line.text.split()) < 6 for c in candidates]
        point = np.zeros(len(candidates), dtype=np.float32)  # the model's pointer: not built
        columns = [cosine, near, bm25, cover, kind, rank, short, point]
        return np.column_stack([np.asarray(c, dtype=np.float32) for c in columns])

    def vectors(self, candidates: Sequence[Candidate]) -> np.ndarray:
        """The candidates' line vectors, read per chunk from the store where it has them."""
        records = list({c.record.chunk_id: c.record for c in candidates}.values())
        vectors = self.chunk_vectors(records)
        per_chunk = dict(zip([r.chunk_id for r in records], vectors, strict=True))
        return np.vstack([per_chunk[c.record.chunk_id][c.index] for c in candidates])

    def chunk_vectors(self, records: Sequence[ChunkRecord]) -> list[np.ndarray]:
        """Each chunk's line vectors (one row per line of mail_lines, with its context): stored
        per chunk text and encoder, so a chunk's vectors are the same whichever prompt it is in,
        and whether they were just computed or stored long ago (always through float16)."""
        texts = [[line.scored for line in mail_lines(r.text)] for r in records]
        keys = [_key(r.text) for r in records]
        found = self.stored.get(self.embedder.name, keys) if self.stored is not None else {}
        out = []
        for key, lines in zip(keys, texts, strict=True):
            if key not in found or len(found[key]) != len(lines):
                vectors = rounded(self.embedder.embed_batch(lines)) if lines else np.zeros((0, 1))
                if lines and self.stored is not None:
                    self.stored.put(self.embedder.name, key, vectors)
                found[key] = vectors
            out.append(found[key])
        return out


def prompt_records(records: Sequence[ChunkRecord], found: Found, chunks: str) -> list[ChunkRecord]:
    """The chunks the model's sentence is written from ([answer] prompt_chunks): all of
    `records`, or ("shown") those of the lines shown."""
    return found.shown_records(records) if chunks == "shown" else list(records)


def lacks_kind(question: str, candidates: Sequence[Candidate], strict: bool = True) -> bool:
    """The question asks for a kind of term and none of these lines holds one the question does
    not name. `strict` (the best mail's lines, a score under the bar): no whole date for
    "when", no figure for "how much", no full name for "who" … Not strict (the quote's lines,
    whatever its score): not even a weekday, a bare figure or a capitalised word, so the quote
    cannot be the answer ("when" answered by a line with no date: evidence_lines.json's
    not-found rows). A question asking for no kind is never "not found" by its kind, only
    marked when the model does not confirm its quote."""
    kinds = asked_kinds(question)
    if not kinds:
        return False
    if not any(kind_spans(c.line.text, question, kinds, strict=strict) for c in candidates):
        return True
    # "how much does it cost" wants an amount, "what time" a time of day, not any figure or date
    return not _holds_forms(question, candidates, asked_forms(question))


def _holds_forms(question: str, candidates: Sequence[Candidate], forms: set[str]) -> bool:
    """Every form asked (answer/text.py asked_forms) stands in one of these lines."""
    return all(any(form_spans(c.line.text, question, form) for c in candidates) for form in forms)


def _key(text: str) -> str:
    return hashlib.sha256(f"{LINES_VERSION}\n{text}".encode()).hexdigest()[:32]


def mail_key(record: ChunkRecord) -> str:
    """What one mail (or note) is, whichever chunk or copy of it."""
    return record.message_id or record.note_path or f"chunk:{record.chunk_id}"


def distinct_mails(records: Sequence[ChunkRecord]) -> list[ChunkRecord]:
    """The first chunk of each distinct mail, in the order given."""
    seen: dict[str, ChunkRecord] = {}
    for r in records:
        seen.setdefault(mail_key(r), r)
    return list(seen.values())


def candidates_of(records: Sequence[ChunkRecord]) -> list[Candidate]:
    """Every line of the chunks, a line that another candidate mail also holds counted once:
    where the mail's own copy is among them, the copy quoted in a reply or forward goes."""
    ranks = {mail_key(r): i for i, r in enumerate(distinct_mails(records))}
    rows = [
        Candidate(r, ranks[mail_key(r)], i, line)
        for r in records
        for i, line in enumerate(mail_lines(r.text))
    ]
    keep: dict[str, Candidate] = {}
    for c in sorted(rows, key=lambda c: (c.line.quoted, c.rank)):
        keep.setdefault(" ".join(c.line.text.lower().split()), c)
    kept = {id(c) for c in keep.values()}
    return [c for c in rows if id(c) in kept]


def shown_lines(
    ranked: Sequence[tuple[Candidate, float]],
) -> tuple[list[Candidate], list[Candidate]]:
    """(quote, also): the SHOWN best lines of at most two mails. The quote is the best line's
    mail's lines among them, in the mail's order (one line rarely carries its subject and its
    fact both); `also` the lines of the first other mail that score ALSO of the best, best
    first. A line of a third mail is passed over for the next line of these two."""
    if not ranked:
        return [], []
    (best, top), key = ranked[0], mail_key(ranked[0][0].record)
    quote, also, other = [best], [], None
    for candidate, p in ranked[1:]:
        if len(quote) + len(also) >= SHOWN:
            break
        mail = mail_key(candidate.record)
        if mail == key:
            quote.append(candidate)
        elif p >= ALSO * top and other in (None, mail):
            other = mail
            also.append(candidate)
    return sorted(quote, key=lambda c: (c.record.chunk_id, c.index)), also


def whole_kind_shown(
    question: str, ranked: list[tuple[Candidate, float]], quote: list[Candidate], also: list
) -> list[Candidate]:
    """The quote with the best line of its mail holding a whole term of the kind asked (a
    whole date for "when", a full name for "who") in place of its weakest line, where its
    lines hold only a loose one (a weekday, a first name, "noon"): the fact often stands a
    line or two below the one that names the subject. A quote of no term of the kind is left
    as it is ("not found" by its kind, lacks_kind)."""
    kinds = asked_kinds(question)
    whole = lambda c: bool(kind_spans(c.line.text, question, kinds, strict=True))  # noqa: E731
    if not kinds or any(map(whole, quote)) or lacks_kind(question, quote, strict=False):
        return quote
    key, score = mail_key(quote[0].record), {id(c): p for c, p in ranked}
    holder = next((c for c, _ in ranked if mail_key(c.record) == key and whole(c)), None)
    if holder is None or (len(quote) == 1 and len(quote) + len(also) >= SHOWN):
        return quote
    kept = (
        quote if len(quote) + len(also) < SHOWN else sorted(quote, key=lambda c: -score[id(c)])[:-1]
    )
    return sorted([*kept, holder], key=lambda c: (c.record.chunk_id, c.index))


def _first(ranked: list[tuple[Candidate, float]], mail: str) -> list[tuple[Candidate, float]]:
    """`ranked` with the lines of `mail` moved first, each part in its order."""
    ours = [r for r in ranked if mail_key(r[0].record) == mail]
    return ours + [r for r in ranked if mail_key(r[0].record) != mail]


def _evidence(candidate: Candidate, question: str) -> Evidence:
    return Evidence(candidate.record.chunk_id, window(candidate.line.text, question))


def holds(record: ChunkRecord, line: str) -> bool:
    """Whether the chunk still has `line` (as a quote shows it) among its lines."""
    return any(line_key(clipped(x.text)) == line_key(line) for x in mail_lines(record.text))
