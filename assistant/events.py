"""What the answer path yields, as it happens: the CLI prints them, the TUI's relay turns them into
messages, benches read them. One class per event; nothing else defines them. And Stopped, what
an answer raises when its asker stops it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from assistant.answer.evidence import Evidence
from assistant.knowledge.retrieval import Hit

Stop = Callable[[], bool]  # the asker's stop (Esc, quitting, Ctrl-C): true once it is not wanted


class Stopped(Exception):
    """The asker stopped the answer (Esc, a new question, quitting the app): raised by the
    model's check between the pieces of its prefill and after each token it decodes, so the
    answer ends within a piece. The KV tree keeps only the segments computed whole."""


@dataclass(frozen=True)
class QAHitFound:
    question: str  # the stored question that matched
    similarity: float
    entry_id: int = 0  # the QA-bank entry served (what `Answerer.refuse_hit` refuses)
    made: float = 0.0  # when the stored answer was made (time.time(); 0: not known)


@dataclass(frozen=True)
class HitTightened:
    """Asked afresh, the question got another answer than the QA bank's entry would have served:
    the entry is served from now on only to questions more similar than `similarity`."""

    question: str  # the stored question whose answer differed
    similarity: float
    entry_id: int


@dataclass(frozen=True)
class QuestionRewritten:
    """A follow-up turned into a standalone question (assistant/mail/followup.py), before it is
    answered: what it was asked as, and why."""

    asked: str
    standalone: str
    because: tuple[str, ...] = ()


@dataclass(frozen=True)
class FiltersRead:
    """The filters read from the question (query terms, or its words: assistant/mail), shown
    before the answer; `matched` mails meet them (0: nothing is answered from other mail)."""

    text: str  # what ranks the mail the filters leave
    filters: dict[str, list[str]]
    shown: str  # "from: Vince Kaminski · date: 2001-10-08..2001-10-14"
    matched: int
    source: str = "words"  # "terms" (typed from:…) or "words" (read from the question)


@dataclass(frozen=True)
class ChunksRetrieved:
    hits: list[Hit]


@dataclass(frozen=True)
class ChunksOrdered:
    chunk_ids: list[int]


@dataclass(frozen=True)
class QuoteFound:
    """The mail's own line(s) that answer, found before the model runs: shown at once."""

    lines: list[Evidence]
    span: str  # the part of the lines that answers ("" when the question asks for no kind)
    mail: dict  # the quoted mail: sender, date, subject, id, chunk_id (answer/shape.py)
    band: str  # "answer" (a quote; whether the model confirms it comes with AnswerDone) | "none"
    score: float
    nearest: list[dict] = field(default_factory=list)  # the nearest mails, for "not found"
    also: list[Evidence] = field(default_factory=list)  # another mail's best lines, if close
    also_mail: dict = field(default_factory=dict)
    checking: bool = False  # the reader will judge it: shown marked "checking…" until QuoteJudged


@dataclass(frozen=True)
class QuoteJudged:
    """The reader's verdict on the quote shown (answer/judge.py), which replaces its mark in
    place: "confirmed", "unsure" (the writer's sentence decides), "moved" (another line states it:
    `quote` is the new one) or "not found" (`quote` says so, with the nearest mails)."""

    verdict: str
    margin: float
    quote: QuoteFound
    seconds: float = 0.0  # the reader's time


@dataclass(frozen=True)
class KVReused:
    reused_tokens: int
    prompt_tokens: int
    mode: str = "exact"  # "any-order": some chunks' KV was placed out of its cached place
    repaired: int = 0  # of the reused tokens, re-decoded in place (the repair policy)
    segments: int = 0  # prompt segments reused: the system prompt, then chunks


@dataclass(frozen=True)
class TokenStreamed:
    text: str


@dataclass
class AnswerDone:
    question: str
    answer: str
    sources: list[dict]
    qa_hit: bool
    kv_reused_tokens: int
    prompt_tokens: int
    timings: dict[str, float] = field(default_factory=dict)
    # the lines shown as support, at most three (answer/evidence.py SHOWN): the quote's, of one
    # mail, and another mail's best lines when they score close (the answer shows each once)
    evidence: list[Evidence] = field(default_factory=list)
    # nothing shown is marked: the quote cleared the bar and any sentence shown stands in it
    supported: bool = True
    unsupported: list[str] = field(default_factory=list)  # the terms that do not
    kv_reuse: str = "exact"  # as KVReused.mode
    kv_repaired: int = 0
    # the model's own draft when its sentence was not shown (a term of it is not in the quoted
    # lines: `unsupported` lists them); "" otherwise
    drafted: str = ""
    span: str = ""  # the part of the quote that answers
    mail: dict = field(default_factory=dict)  # the quoted mail (sender, date, subject, id)
    not_found: bool = False  # no line cleared the bar: `answer` says so, with the nearest mails
    sentence: str = ""  # the model's sentence shown after the quote ("" when none is)
    # "answer" (the model's reading confirms the quote) | "weak" (it does not: shown marked) |
    # "none" (not found)
    band: str = "answer"


Event = (
    QAHitFound
    | HitTightened
    | QuestionRewritten
    | FiltersRead
    | ChunksRetrieved
    | ChunksOrdered
    | QuoteFound
    | QuoteJudged
    | KVReused
    | TokenStreamed
    | AnswerDone
)
