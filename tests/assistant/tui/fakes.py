"""Deterministic stand-ins for the Answerer and the precompute, with the real cache library
underneath (an in-memory QA bank and KV tree), so the cache screen's counts are real counts."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from assistant.answer.answerer import ALL_LAYERS, CacheLayers, checked
from assistant.answer.evidence import Evidence, select_evidence
from assistant.events import (
    AnswerDone,
    ChunksOrdered,
    ChunksRetrieved,
    KVReused,
    QAHitFound,
    TokenStreamed,
)
from assistant.home import bundled
from assistant.knowledge.retrieval import Hit
from assistant.knowledge.store import KnowledgeStore
from cache.blobs import BlobStore
from cache.db import open_cache_db
from cache.kv_tree import KIND, KVTree, segment_hash
from cache.qa_bank import QABank
from tests.conftest import FakeEmbedder

SYSTEM = (bundled("prompts") / "answer.txt").read_text(encoding="utf-8")  # the real instruction
ANSWER = "The kitchen work starts on Monday 2 March, says Bram in his last mail."


class FakeAnswerer:
    """Retrieves k+1 candidates (newest first) and, as a reranker does, puts k of them in another
    order into the "prompt"; streams `reply` word by word (`delay` s per word), stores one KV node
    per prompt chunk and the answer in the QA bank; a repeated question is a QA hit. Evidence and
    the support check (and the quote of an unsupported answer) are the real functions', over the
    prompt's chunks (a hit's: its sources), unless a test sets `evidence` or `unsupported`. The
    last AnswerDone is kept in `done`."""

    def __init__(self, store: KnowledgeStore, kv_dir: Path, delay: float = 0.01, k: int = 3):
        db = open_cache_db(None)
        self.store, self.delay, self.k = store, delay, k
        self.reply = ANSWER
        self.evidence: list[Evidence] | None = None  # None: the real selection
        self.unsupported: list[str] | None = None  # None: the real support check
        self.quote = True  # as [answer] unsupported = "quote", the default; False: "mark"
        self.done: AnswerDone | None = None
        self.embedder = FakeEmbedder()
        self.qa = QABank(db, 0.95, 2**20)
        self.kv = KVTree(db, BlobStore(db, kv_dir, {KIND: 2**30}), "fake-model")
        self.closed = 0  # generators closed before their end (a cancelled answer)

    def answer(self, question: str, layers: CacheLayers = ALL_LAYERS):
        start = time.perf_counter()
        vector = self.embedder.embed_batch([question])[0]
        hit = self.qa.lookup(vector)
        if hit is not None:
            yield QAHitFound(hit.entry.question, hit.similarity, hit.entry.id)
            yield self._from_bank(question, hit.entry, start)
            return
        candidates = self.store.chunk_records(list(range(self.k + 1, 0, -1)))
        yield ChunksRetrieved([Hit(r.chunk_id, 1.0, 1, 1, r) for r in candidates])
        records = sorted(candidates, key=lambda r: r.chunk_id)[: self.k]
        yield ChunksOrdered([r.chunk_id for r in records])
        reused = self._prefill([r.chunk_id for r in records])
        yield KVReused(reused, 100 * self.k + 20)
        answer, first = yield from self._stream()
        self.qa.add(question, vector, answer, [str(r.chunk_id) for r in records])
        sources = [r.ref() for r in records]
        done = AnswerDone(
            question, answer, sources, False, reused, 100 * self.k + 20, _times(start, first)
        )
        yield self._checked(done, question, vector, records)

    def refuse_hit(self, question: str) -> QAHitFound | None:
        """As the real one: the entry a lookup would serve is refused at this similarity."""
        hit = self.qa.find(self.embedder.embed_batch([question])[0])
        if hit is None:
            return None
        self.qa.refuse(hit.entry.id, hit.similarity)
        return QAHitFound(hit.entry.question, hit.similarity, hit.entry.id)

    def _stream(self):
        first = None
        try:
            for word in self.reply.split(" "):
                first = first or time.perf_counter()
                time.sleep(self.delay)
                yield TokenStreamed(word + " ")
        except GeneratorExit:
            self.closed += 1
            raise
        return self.reply, first

    def _from_bank(self, question: str, entry, start: float) -> AnswerDone:
        records = self.store.chunk_records(entry.chunk_ids)
        sources = [r.ref() for r in records]
        done = AnswerDone(question, entry.answer, sources, True, 0, 0, _times(start, start))
        return self._checked(done, entry.question, self.qa.vector(entry.id), records)

    def _checked(self, done: AnswerDone, question: str, vector, records) -> AnswerDone:
        """`done` with its evidence and support check, as the real pipeline fills them in."""
        evidence = self.evidence
        if evidence is None:
            evidence = select_evidence(question, vector, records, self.embedder)
        texts = [r.text for r in records]
        if self.unsupported is None:
            self.done = checked(done, evidence, texts, question, SYSTEM, self.quote)
        else:
            forced = {"supported": not self.unsupported, "unsupported": self.unsupported}
            self.done = replace(done, evidence=evidence, **forced)
        return self.done

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

    def __init__(self, pipeline: FakeAnswerer, questions: list[str], delay: float = 0.01):
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
