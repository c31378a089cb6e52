"""What the app needs from the rest of the program, behind one seam: `services_for(ctx)` wires the
real Answerer, importer, precompute and the caches' counts; pilot tests pass fakes of the same
shape."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

if TYPE_CHECKING:
    from assistant.importing.importer import Importer, ImportReport
    from assistant.knowledge.store import ChunkRecord
    from assistant.precompute.idle import Precompute
    from assistant.services import Services
    from cache.counts import CacheCounts

T = TypeVar("T")


class AnswererLike(Protocol):
    # `stop`: true once the answer is no longer wanted; the model then raises events.Stopped
    def answer(self, question: str, *, stop: Callable[[], bool] | None = None) -> Iterator[Any]: ...

    def refuse_hit(self, question: str) -> Any: ...


class ImporterLike(Protocol):
    def run(
        self, paths: list[Path], notify: Callable[[Any], None], cancelled: Callable[[], bool]
    ) -> ImportReport: ...


class PrecomputeLike(Protocol):
    def run(
        self,
        deadline: float | None = None,
        notify: Callable[[Any], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> Any: ...

    def status(self) -> dict: ...


class SchedulerLike(Protocol):
    def start(self) -> None: ...

    def shutdown(self) -> None: ...


# the idle scheduler, given what to call (from its thread) on progress and when a run is done
IdleFactory = Callable[[Callable[[Any], None], Callable[[Any], None]], SchedulerLike]


class KnowledgeLike(Protocol):
    def stats(self) -> dict: ...

    def count_chunks(self) -> int: ...

    def library_counts(self) -> dict[str, int]: ...

    def chunk_records(self, ids: list[int]) -> list[ChunkRecord]: ...

    def document_of_chunk(self, chunk_id: int) -> dict | None: ...


class Lazy(Generic[T]):
    """A value built on first use, once, from any thread: loading a model takes seconds, so the
    app opens at once and the first worker that needs it pays (and says "loading model…")."""

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._value: T | None = None
        self._lock = threading.Lock()

    @property
    def ready(self) -> bool:
        return self._value is not None

    def get(self) -> T:
        with self._lock:
            if self._value is None:
                self._value = self._factory()
            return self._value


@dataclass
class AppServices:
    knowledge: KnowledgeLike
    answerer: Lazy[AnswererLike]
    importer: Lazy[ImporterLike]
    precompute: Callable[[], PrecomputeLike] | None  # a fresh one per run; None: no precompute
    demo_paths: list[Path]
    kv_budget_bytes: int
    # what the caches hold, read from their database on a worker: no model loads for it
    cache_counts: Callable[[], CacheCounts]
    activity: Callable[[], None] = lambda: None  # marks the user active for the idle scheduler
    idle: IdleFactory | None = None  # started with the app, shut down when it ends
    browse_root: Path = field(default_factory=Path.home)
    # shown when the app opens (read on a worker): e.g. why search by meaning skips some chunks
    notice: str | Callable[[], str] = ""
    # an answerer whose retrieval looks first in the given threads (a follow-up's); None: the
    # chat rewrites follow-ups but retrieves as for any question
    focused: Callable[[Sequence[str]], AnswererLike] | None = None


def services_for(ctx: Services) -> AppServices:
    from assistant.home import bundled
    from assistant.precompute.idle import IdleScheduler

    data = bundled("data")
    answerer = Lazy(lambda: _warm(ctx, ctx.answerer()))
    settings = ctx.settings
    return AppServices(
        knowledge=ctx.store,
        answerer=answerer,
        importer=Lazy(lambda: _warm_importer(ctx, _importer(ctx))),
        # "precompute now" is asked for: no settling wait after an import (as the CLI's)
        precompute=lambda: _precompute(ctx, answerer),
        demo_paths=[data / "mail" / "demo.mbox", data / "notes"],
        kv_budget_bytes=settings.cache.kv_budget_bytes,
        cache_counts=lambda: _cache_counts(ctx),
        activity=ctx.activity,
        idle=lambda notify, done: IdleScheduler(
            ctx.settings.precompute, ctx.presence, ctx.precompute_parts, notify, done
        ),
        notice=lambda: _vectors_notice(ctx),
        focused=ctx.focused_answerer,
    )


def _cache_counts(ctx: Services) -> CacheCounts:
    """The cache screen's counts, from the cache database alone, and the reranking setting with
    what is on (the reranker is made, its model is not loaded): opening the screen loads no
    model; its `p` does, as the precompute needs them."""
    from assistant.rerank import selfcheck
    from cache.counts import cache_counts

    counts = cache_counts(ctx.cache_db, ctx.blobs)
    setting = ctx.settings.rerank
    current = "off" if setting == "off" else ctx.reranker.current
    counts.precompute["rerank"] = selfcheck.status(setting, current, ctx.rerank_check())
    return counts


def _vectors_notice(ctx: Services) -> str:
    """What `search` says when chunks lack this encoder's vectors (embedding.backend changed, or
    an import stopped) and no import is embedding them; empty when none lacks one."""
    from assistant.knowledge.embeddings import vectors_notice
    from assistant.knowledge.shipped import ModelMissing

    if not ctx.store.count_chunks() or ctx.presence.embedding_running():
        return ""
    try:
        embedder = ctx.embedder
    except ModelMissing as exc:  # the app opens all the same: search by words still works
        return str(exc)
    return vectors_notice(ctx.store, embedder.name, embedder.backend) or ""


def _precompute(ctx: Services, answerer: Lazy[AnswererLike]) -> Precompute:
    """A precompute pass; the models it shares with the chat load here, once, if not yet."""
    from assistant.precompute.idle import Precompute

    answerer.get()
    return Precompute(ctx.precompute_parts(), settle_seconds=0)


def _importer(ctx: Services) -> Importer:
    """The import worker's Importer, on a connection of its own: the chat reads the knowledge
    bank while it writes, and sees each committed batch (WAL), never a half-written one."""
    from assistant.knowledge.db import open_db
    from assistant.knowledge.store import KnowledgeStore

    return ctx.importer(KnowledgeStore(open_db(ctx.home.knowledge_db)))


def _warm_importer(ctx: Services, importer: Importer) -> Importer:
    """The importer with its encoder loaded now; without one (missing, its export failed) it
    reads and stores the mail as the CLI's does, and its report says why nothing is embedded."""
    return _warm(ctx, importer) if importer.embedder is not None else importer


def _warm(ctx: Services, value: T) -> T:
    """Load the embedding model now (it loads on first use): the wait then shows as "loading
    the models…" rather than inside the first answer's TTFT or the first embedding batch."""
    ctx.embedder.embed_batch(["warm-up"])
    return value
