"""What the answer path yields, as it happens: the CLI prints them, the TUI's relay turns them into
messages, benches read them. One class per event; nothing else defines them."""

from __future__ import annotations

from dataclasses import dataclass, field

from assistant.answer.evidence import Evidence
from assistant.knowledge.retrieval import Hit


@dataclass(frozen=True)
class QAHitFound:
    question: str  # the stored question that matched
    similarity: float
    entry_id: int = 0  # the QA-bank entry served (what `Answerer.refuse_hit` refuses)


@dataclass(frozen=True)
class ChunksRetrieved:
    hits: list[Hit]


@dataclass(frozen=True)
class ChunksOrdered:
    chunk_ids: list[int]


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
    # the sentences of the sources that answer the question (shown under the answer)
    evidence: list[Evidence] = field(default_factory=list)
    # the answer holds the kind of term asked for, and every name, number and date of it appears
    # in the sources or the question (assistant/answer/support.py)
    supported: bool = True
    unsupported: list[str] = field(default_factory=list)  # the terms that do not
    kv_reuse: str = "exact"  # as KVReused.mode
    kv_repaired: int = 0
    # the model's own answer when it was not supported and `answer` quotes the evidence lines
    # instead ([answer] unsupported = "quote"); "" otherwise
    drafted: str = ""


Event = QAHitFound | ChunksRetrieved | ChunksOrdered | KVReused | TokenStreamed | AnswerDone
