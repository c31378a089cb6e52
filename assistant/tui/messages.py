"""What workers report back to the UI thread, as dataclass messages named as past events.

Workers only ever post these; widgets are changed by the handlers, on the UI thread."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:
    from assistant.answer.evidence import Evidence
    from assistant.importer import ImportProgressed, ImportReport
    from assistant.precompute import PrecomputeProgressed


@dataclass(frozen=True)
class SourceView:
    """One source of an answer, as the Sources panel shows it."""

    chunk_id: int
    kind: str
    title: str
    sender: str
    date: str
    passage: str

    @classmethod
    def of(cls, record: Any) -> SourceView:
        """From a ChunkRecord: its passage, the text without the title line."""
        r = record
        return cls(r.chunk_id, r.kind, r.title, r.sender, r.date, r.passage)


@dataclass
class AnswerStatusChanged(Message):
    turn: int
    status: str


@dataclass
class SourcesFound(Message):
    turn: int
    sources: list[SourceView]


@dataclass
class AnswerStreamed(Message):
    turn: int
    text: str


@dataclass
class AnswerFinished(Message):
    """The Answerer's AnswerDone, for one turn. `source_ids` are the answer's chunks in the
    Sources panel's order, so an evidence sentence can name its source as [n]."""

    turn: int
    answer: str
    qa_hit: bool
    kv_reused_tokens: int
    prompt_tokens: int
    timings: dict[str, float] = field(default_factory=dict)
    evidence: list[Evidence] = field(default_factory=list)
    supported: bool = True
    unsupported: list[str] = field(default_factory=list)
    source_ids: list[int] = field(default_factory=list)
    kv_reuse: str = "exact"  # as the Answerer's AnswerDone
    kv_repaired: int = 0
    drafted: str = ""  # the model's unsupported answer, when `answer` quotes the evidence

    def source_number(self, chunk_id: int) -> int | None:
        """The [n] of a chunk in the Sources panel (None: not one of this answer's sources)."""
        return self.source_ids.index(chunk_id) + 1 if chunk_id in self.source_ids else None


@dataclass
class AnswerStopped(Message):
    turn: int
    seconds: float


@dataclass
class AnswerFailed(Message):
    turn: int
    error: str


@dataclass
class JobStatusChanged(Message):
    """A background job says what it is doing (e.g. "loading the embedding model…")."""

    job: str
    status: str


@dataclass
class ImportReported(Message):
    """The importer's progress event, brought to the UI thread (one class per event: the TUI
    carries the core's, it does not copy it field by field)."""

    event: ImportProgressed


@dataclass
class ImportFinished(Message):
    report: ImportReport


@dataclass
class WorkFailed(Message):
    """A background job (import, precompute, stats) stopped with an error."""

    job: str
    error: str


@dataclass
class CacheStatsRead(Message):
    qa: dict[str, int]
    kv: dict[str, int]
    precompute: dict | None


@dataclass
class PrecomputeReported(Message):
    """The precompute's progress event, brought to the UI thread."""

    event: PrecomputeProgressed
    idle: bool = False  # a run the idle scheduler started (not the "precompute now" key)


@dataclass
class PrecomputeFinished(Message):
    summary: str
    idle: bool = False
