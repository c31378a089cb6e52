"""Runs on a worker thread: turns the Answerer's events into UI messages and posts them.

Nothing here touches a widget; `post` is a MessagePump's thread-safe post_message."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.message import Message

from assistant import events as p
from assistant.answer.evidence import mail_key
from assistant.answer.shape import remembered
from assistant.tui.backend import AnswererLike, KnowledgeLike
from assistant.tui.messages import (
    AnswerFinished,
    AnswerStatusChanged,
    AnswerStopped,
    QuoteShown,
    RewriteShown,
    SourcesFound,
    SourceView,
)

if TYPE_CHECKING:
    from assistant.knowledge.store import ChunkRecord

Post = Callable[[Message], object]


def relay_answer(
    answerer: AnswererLike,
    knowledge: KnowledgeLike,
    turn: int,
    question: str,
    post: Post,
    cancelled: Callable[[], bool],
) -> None:
    """Stream one answer; stop once `cancelled()` turns true: between events (closing the
    generator, which releases the model), or inside the model's prefill or decode, which
    checks it between its pieces (events.Stopped)."""
    started = time.perf_counter()
    if cancelled():  # stopped while the models loaded: not asked, not kept in the history
        post(AnswerStopped(turn, time.perf_counter() - started))
        return
    post(AnswerStatusChanged(turn, "searching your mail and notes…"))
    relay = _Relay(turn, knowledge)
    events = answerer.answer(question, stop=cancelled)
    try:
        for event in events:
            if cancelled():
                break
            for message in relay.messages(event):
                post(message)
        else:
            return  # answered to its end
    except p.Stopped:  # inside the model, within a piece of its prefill or decode
        pass
    finally:
        events.close()
    post(AnswerStopped(turn, time.perf_counter() - started))


WRITING = "writing a sentence…"


class _Relay:
    """One answer's events as UI messages. The Sources panel lists the prompt's mails in prompt
    order (ChunksOrdered), one line each, not the wider candidate set a reranker chose them from
    (ChunksRetrieved): the candidates' records are kept to look the chosen ones up. The quote is
    shown as soon as it is found; the model's draft is not shown as it streams (its sentence is
    shown, or dropped, once it is checked against the quote: AnswerDone)."""

    def __init__(self, turn: int, knowledge: KnowledgeLike) -> None:
        self.turn = turn
        self.knowledge = knowledge
        self.retrieved: dict[int, ChunkRecord] = {}
        self.writing = False  # the status says the model is writing

    def messages(self, event: object) -> list[Message]:
        turn = self.turn
        if isinstance(event, p.TokenStreamed):
            return [] if self.writing else [self.status(WRITING)]
        if isinstance(event, p.QuestionRewritten):
            return [RewriteShown(turn, event)]
        if isinstance(event, p.QAHitFound):
            return [AnswerStatusChanged(turn, remembered(event.question, event.made))]
        if isinstance(event, p.FiltersRead):  # query terms, or filters read from the words
            if not event.matched:
                return [AnswerStatusChanged(turn, f"no mail meets {event.shown}")]
            return [AnswerStatusChanged(turn, f"{event.shown} ({event.matched} mails)")]
        if isinstance(event, p.ChunksRetrieved):
            self.retrieved = {h.chunk_id: h.record for h in event.hits}
            return []
        if isinstance(event, p.ChunksOrdered):
            sources = self.sources(event.chunk_ids)
            return [SourcesFound(turn, sources), AnswerStatusChanged(turn, "reading the mails…")]
        if isinstance(event, p.QuoteFound):
            return [QuoteShown(turn, event)]
        if isinstance(event, p.QuoteJudged):  # the reader's verdict replaces the mark in place
            return [QuoteShown(turn, event.quote, event.verdict)]
        if isinstance(event, p.KVReused):
            reused = f"{event.reused_tokens} of {event.prompt_tokens} prompt tokens cached"
            return [self.status(f"{WRITING} ({reused})")]
        if isinstance(event, p.AnswerDone):
            return self.finished(event)
        return []

    def status(self, line: str) -> AnswerStatusChanged:
        self.writing = True
        return AnswerStatusChanged(self.turn, line)

    def sources(self, chunk_ids: list[int]) -> list[SourceView]:
        """The mails of `chunk_ids`, in that order, one per mail (its first chunk here)."""
        mails: dict[str, ChunkRecord] = {}
        for record in self.records(chunk_ids):
            mails.setdefault(mail_key(record), record)
        return [SourceView.of(r) for r in mails.values()]

    def records(self, chunk_ids: list[int]) -> list[ChunkRecord]:
        """The records of `chunk_ids`, in that order: from the candidates, or else read."""
        missing = [i for i in chunk_ids if i not in self.retrieved]
        if missing:
            self.retrieved.update({r.chunk_id: r for r in self.knowledge.chunk_records(missing)})
        return [self.retrieved[i] for i in chunk_ids if i in self.retrieved]

    def finished(self, done: p.AnswerDone) -> list[Message]:
        finished = AnswerFinished(self.turn, done)
        if not done.qa_hit:
            return [finished]
        # no ChunksOrdered came: the remembered answer's sources, read back
        ids = [int(s["chunk_id"]) for s in done.sources]
        return [SourcesFound(self.turn, self.sources(ids)), finished]
