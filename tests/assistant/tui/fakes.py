"""Deterministic stand-ins for the pipeline and the precompute, with the real cache library
underneath (an in-memory QA bank and KV tree), so the cache screen's counts are real counts."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from assistant.knowledge.retrieval import Hit
from assistant.knowledge.store import KnowledgeStore
from assistant.pipeline import (
    AnswerDone,
    ChunksOrdered,
    ChunksRetrieved,
    KVReused,
    QAHitFound,
    TokenStreamed,
)
from cache.blobs import BlobStore
from cache.db import open_cache_db
from cache.kv_tree import KIND, KVTree, segment_hash
from cache.qa_bank import QABank
from tests.conftest import FakeEmbedder

ANSWER = "The kitchen work starts on Monday 2 March, says Bram in his last mail."


class FakePipeline:
    """Retrieves the first `k` chunks, streams ANSWER word by word (`delay` s per word), stores
    one KV node per chunk and the answer in the QA bank; a repeated question is a QA hit."""

    def __init__(self, store: KnowledgeStore, kv_dir: Path, delay: float = 0.01, k: int = 3):
        db = open_cache_db(None)
        self.store, self.delay, self.k = store, delay, k
        self.embedder = FakeEmbedder()
        self.qa = QABank(db, 0.95, 2**20)
        self.kv = KVTree(db, BlobStore(db, kv_dir, {KIND: 2**30}), "fake-model")
        self.closed = 0  # generators closed before their end (a cancelled answer)

    def answer(self, question: str, use_cache: bool = True):
        start = time.perf_counter()
        vector = self.embedder.embed_batch([question])[0]
        hit = self.qa.lookup(vector)
        if hit is not None:
            yield QAHitFound(hit.entry.question, hit.similarity)
            sources = [{"chunk_id": int(i)} for i in hit.entry.sources]
            yield AnswerDone(question, hit.entry.answer, sources, True, 0, 0, _times(start, start))
            return
        records = self.store.chunk_records(list(range(1, self.k + 1)))
        yield ChunksRetrieved([Hit(r.chunk_id, 1.0, 1, 1, r) for r in records])
        yield ChunksOrdered([r.chunk_id for r in records])
        reused = self._prefill([r.chunk_id for r in records])
        yield KVReused(reused, 100 * self.k + 20)
        first = None
        try:
            for word in ANSWER.split(" "):
                first = first or time.perf_counter()
                time.sleep(self.delay)
                yield TokenStreamed(word + " ")
        except GeneratorExit:
            self.closed += 1
            raise
        ids = [str(r.chunk_id) for r in records]
        self.qa.add(question, vector, ANSWER, ids)
        yield AnswerDone(
            question,
            ANSWER,
            [r.ref() for r in records],
            False,
            reused,
            100 * self.k + 20,
            _times(start, first),
        )

    def _prefill(self, chunk_ids: list[int]) -> int:
        hashes = [segment_hash([c]) for c in chunk_ids]
        restored = self.kv.longest_prefix(hashes).depth
        for depth in range(restored, len(hashes)):
            self.kv.store(hashes[: depth + 1], 100 * (depth + 1), b"\0" * 1000)
        return 100 * restored


def _times(start: float, first_token: float) -> dict[str, float]:
    return {"ttft": first_token - start, "total": time.perf_counter() - start}


@dataclass(frozen=True)
class Progress:
    done: int
    total: int
    job: str


@dataclass
class Report:
    jobs: int
    stopped: str

    def summary(self) -> str:
        return f"{self.jobs} jobs, stopped: {self.stopped}"


class FakePrecompute:
    """The shape of assistant.idle.Precompute: answers `questions` into the fake's QA bank."""

    def __init__(self, pipeline: FakePipeline, questions: list[str], delay: float = 0.01):
        self.pipeline, self.questions, self.delay = pipeline, list(questions), delay
        self.done = 0
        self.before_job: Callable[[int], None] = lambda jobs: None  # a test may hold a job here
        self.last_run: dict | None = None

    def run(self, deadline=None, notify=None, cancelled=None) -> Report:
        total, jobs, stopped = len(self.questions), 0, "done"
        for question in list(self.questions):
            if cancelled and cancelled():
                stopped = "cancelled"
                break
            self.before_job(jobs)
            for _ in self.pipeline.answer(question):
                time.sleep(self.delay)
            self.questions.remove(question)
            jobs += 1
            if notify:
                notify(Progress(jobs, total, f"answer: {question}"))
        self.done += jobs
        self.last_run = {
            "finished": "2026-05-01T03:00:00",
            "jobs": jobs,
            "cpu_s": 1.5,
            "stopped": stopped,
        }
        return Report(jobs, stopped)

    def status(self) -> dict:
        return {
            "jobs_queued": len(self.questions),
            "jobs_done": self.done,
            "jobs_failed": 0,
            "predicted_pending": len(self.questions),
            "abstract_items": 0,
            "last_run": self.last_run,
        }


class FakeScheduler:
    """The shape of assistant.idle.IdleScheduler; a test plays an idle run through its callbacks
    (from a thread of its own, as the real scheduler calls them)."""

    def __init__(self, notify, done) -> None:
        self.notify, self.done = notify, done
        self.started = self.stopped = False

    def start(self) -> None:
        self.started = True

    def shutdown(self) -> None:
        self.stopped = True

    def play_run(self, jobs: int) -> threading.Thread:
        def run() -> None:
            for i in range(1, jobs + 1):
                self.notify(Progress(i, jobs, f"predict chunk {i}"))
            self.done(Report(jobs, "cancelled"))

        thread = threading.Thread(target=run)
        thread.start()
        return thread
