"""Runs on a worker thread: turns the Answerer's events into UI messages and posts them.

Nothing here touches a widget; `post` is a MessagePump's thread-safe post_message."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.message import Message

from assistant import events as p
from assistant.tui.messages import (
    AnswerFinished,
    AnswerStatusChanged,
    AnswerStopped,
    AnswerStreamed,
    SourcesFound,
    SourceView,
)
from assistant.tui.services import AnswererLike, KnowledgeLike

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
    """Stream one answer; stop (closing the generator, which releases the model) once
    `cancelled()` turns true."""
    started = time.perf_counter()
    post(AnswerStatusChanged(turn, "searching your mail and notes…"))
    relay = _Relay(turn, knowledge)
    events = answerer.answer(question)
    try:
        for event in events:
            if cancelled():
                post(AnswerStopped(turn, time.perf_counter() - started))
                return
            for message in relay.messages(event):
                post(message)
    finally:
        events.close()


class _Relay:
    """One answer's events as UI messages. The Sources panel lists the prompt's chunks in prompt
    order (ChunksOrdered), not the wider candidate set a reranker chose them from
    (ChunksRetrieved): the candidates' records are kept to look the chosen ones up."""

    def __init__(self, turn: int, knowledge: KnowledgeLike) -> None:
        self.turn = turn
        self.knowledge = knowledge
        self.retrieved: dict[int, ChunkRecord] = {}

    def messages(self, event: object) -> list[Message]:
        turn = self.turn
        if isinstance(event, p.TokenStreamed):
            return [AnswerStreamed(turn, event.text)]
        if isinstance(event, p.QAHitFound):
            return [AnswerStatusChanged(turn, f"QA-bank hit (cosine {event.similarity:.3f})")]
        if isinstance(event, p.ChunksRetrieved):
            self.retrieved = {h.chunk_id: h.record for h in event.hits}
            return []
        if isinstance(event, p.ChunksOrdered):
            sources = [SourceView.of(r) for r in self.records(event.chunk_ids)]
            return [SourcesFound(turn, sources), AnswerStatusChanged(turn, "reading the sources…")]
        if isinstance(event, p.KVReused):
            reused = f"{event.reused_tokens} of {event.prompt_tokens} prompt tokens cached"
            return [AnswerStatusChanged(turn, f"writing… ({reused})")]
        if isinstance(event, p.AnswerDone):
            return self.finished(event)
        return []

    def records(self, chunk_ids: list[int]) -> list[ChunkRecord]:
        """The records of `chunk_ids`, in that order: from the candidates, or else read."""
        missing = [i for i in chunk_ids if i not in self.retrieved]
        if missing:
            self.retrieved.update({r.chunk_id: r for r in self.knowledge.chunk_records(missing)})
        return [self.retrieved[i] for i in chunk_ids if i in self.retrieved]

    def finished(self, done: p.AnswerDone) -> list[Message]:
        ids = [int(s["chunk_id"]) for s in done.sources]
        messages: list[Message] = []
        if done.qa_hit:  # no ChunksOrdered came: the stored answer's sources, read back
            messages.append(SourcesFound(self.turn, [SourceView.of(r) for r in self.records(ids)]))
        finished = AnswerFinished(
            self.turn,
            done.answer,
            done.qa_hit,
            done.kv_reused_tokens,
            done.prompt_tokens,
            done.timings,
            evidence=list(done.evidence),
            supported=done.supported,
            unsupported=list(done.unsupported),
            source_ids=ids,
            kv_reuse=done.kv_reuse,
            kv_repaired=done.kv_repaired,
            drafted=done.drafted,
        )
        return [*messages, finished]
