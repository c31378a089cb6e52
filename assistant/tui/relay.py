"""Runs on a worker thread: turns the pipeline's events into UI messages and posts them.

Nothing here touches a widget; `post` is a MessagePump's thread-safe post_message."""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.message import Message

from assistant import pipeline as p
from assistant.tui.messages import (
    AnswerFinished,
    AnswerStatusChanged,
    AnswerStopped,
    AnswerStreamed,
    SourcesFound,
    SourceView,
)
from assistant.tui.services import KnowledgeLike, PipelineLike

Post = Callable[[Message], object]


def relay_answer(
    pipeline: PipelineLike,
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
    events = pipeline.answer(question)
    try:
        for event in events:
            if cancelled():
                post(AnswerStopped(turn, time.perf_counter() - started))
                return
            for message in _messages(turn, event, knowledge):
                post(message)
    finally:
        events.close()


def _messages(turn: int, event: object, knowledge: KnowledgeLike) -> list[Message]:
    if isinstance(event, p.TokenStreamed):
        return [AnswerStreamed(turn, event.text)]
    if isinstance(event, p.QAHitFound):
        return [AnswerStatusChanged(turn, f"QA-bank hit (cosine {event.similarity:.3f})")]
    if isinstance(event, p.ChunksRetrieved):
        sources = [SourceView.of(h.record) for h in event.hits]
        return [SourcesFound(turn, sources), AnswerStatusChanged(turn, "reading the sources…")]
    if isinstance(event, p.KVReused):
        reused = f"{event.reused_tokens} of {event.prompt_tokens} prompt tokens cached"
        return [AnswerStatusChanged(turn, f"writing… ({reused})")]
    if isinstance(event, p.AnswerDone):
        return _finished(turn, event, knowledge)
    return []


def _finished(turn: int, done: p.AnswerDone, knowledge: KnowledgeLike) -> list[Message]:
    messages: list[Message] = []
    if done.qa_hit:  # no ChunksRetrieved came: the stored answer's sources, read back
        records = knowledge.chunk_records([s["chunk_id"] for s in done.sources])
        messages.append(SourcesFound(turn, [SourceView.of(r) for r in records]))
    messages.append(
        AnswerFinished(
            turn, done.answer, done.qa_hit, done.kv_reused_tokens, done.prompt_tokens, done.timings
        )
    )
    return messages
