"""What workers report back to the UI thread, as dataclass messages named as past events.

Workers only ever post these; widgets are changed by the handlers, on the UI thread."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.message import Message

from assistant.answer.evidence import mail_key

if TYPE_CHECKING:
    from assistant.events import AnswerDone, QuestionRewritten, QuoteFound
    from assistant.importing.importer import ImportProgressed, ImportReport
    from assistant.precompute.runner import PrecomputeProgressed


@dataclass(frozen=True)
class SourceView:
    """One mail (or note) of an answer's sources, as the Sources panel lists it: one line,
    sender · date · subject; `chunk_id` opens the whole message, `mail` says which mail it is
    (two chunks of one mail are one source)."""

    chunk_id: int
    kind: str
    title: str
    sender: str
    date: str
    mail: str

    @classmethod
    def of(cls, record: Any) -> SourceView:
        """From a ChunkRecord."""
        r = record
        return cls(r.chunk_id, r.kind, r.title, r.sender, r.date, mail_key(r))


@dataclass
class AnswerStatusChanged(Message):
    turn: int
    status: str


@dataclass
class SourcesFound(Message):
    turn: int
    sources: list[SourceView]


@dataclass
class QuoteShown(Message):
    """The Answerer's QuoteFound, for one turn: the mail's own lines, shown before the model
    writes (or "not found" with the nearest mails)."""

    turn: int
    quote: QuoteFound
    verdict: str = ""  # the reader's (QuoteJudged), shown in place of "checking…"


@dataclass
class RewriteShown(Message):
    """The core's QuestionRewritten, for one turn: what a follow-up was turned into."""

    turn: int
    rewritten: QuestionRewritten


@dataclass
class AnswerFinished(Message):
    """The Answerer's AnswerDone, for one turn (one class per event: the TUI carries the core's,
    it does not copy it field by field)."""

    turn: int
    done: AnswerDone


@dataclass
class AnswerStopped(Message):
    turn: int
    seconds: float


@dataclass
class NothingImported(Message):
    """A question asked while the knowledge bank holds nothing: not answered (it would say
    "Not found in your mail", as if mail had been read), no model loaded."""

    turn: int


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
class NoticeRead(Message):
    """What the app says as it opens (AppServices.notice), read on a worker."""

    text: str


@dataclass
class LibraryRead(Message):
    """What the knowledge bank holds, read on a worker (documents, emails, notes)."""

    counts: dict


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
