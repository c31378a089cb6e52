"""Deterministic stand-ins for the model, retrieval and the precompute around the real Answerer:
the quote (the real LineFinder), the sentence check, the QA bank's serving and the events are the
real code's, over an in-memory QA bank and KV tree, so the cache screen's counts are real counts."""

from __future__ import annotations

import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from assistant.answer.answerer import ALL_LAYERS, Answerer, CacheLayers
from assistant.answer.evidence import Found, LineFinder
from assistant.answer.qa_memory import lookup_hit
from assistant.answer.shape import checked_sentence
from assistant.clock import Clock
from assistant.config import Settings
from assistant.events import AnswerDone, Event, KVReused, Stop, Stopped, TokenStreamed
from assistant.knowledge.retrieval import Hit
from assistant.knowledge.store import KnowledgeStore
from assistant.llm.decoding import sentences_ended
from cache.blobs import BlobStore
from cache.db import open_cache_db
from cache.kv_tree import KIND, KVTree, segment_hash
from cache.qa_bank import QABank
from cache.qa_entries import QAEntry
from tests.conftest import FakeEmbedder

ANSWER = "The kitchen work starts on Monday 2 March, says Bram in his last mail."


def forwarded(part: str, name: str, doc: str) -> property:
    """A property that reads and sets `name` on the object in the attribute `part`."""
    return property(
        lambda self: getattr(getattr(self, part), name),
        lambda self, value: setattr(getattr(self, part), name, value),
        doc=doc,
    )


class FakeAnswerer(Answerer):
    """The real Answerer over the store, with a fake retrieval (FakeSelection), model
    (FakeModel) and QA memory (FakeMemory): the events, their order, the quote and the checks
    are the real ones. The last AnswerDone is kept in `done`."""

    def __init__(self, store: KnowledgeStore, kv_dir: Path, delay: float = 0.01, k: int = 3):
        db = open_cache_db(None)
        embedder = FakeEmbedder()
        kv = KVTree(db, BlobStore(db, kv_dir, {KIND: 2**30}), "fake-model")
        self.model = FakeModel(kv, delay)
        memory = FakeMemory(QABank(db, 0.95, 2**20))
        select = FakeSelection(store, k)
        # the defaults: the answer path reads [answer] prompt_chunks; retrieval and the model
        # are faked
        settings = Settings()
        lines = FakeLines(embedder)
        super().__init__(settings, store, embedder, select, self.model, memory, lines)
        self.done: AnswerDone | None = None

    # what a test sets on the fake answerer, forwarded to the fake part that uses it
    reply = forwarded(
        "model",
        "reply",
        "What the model writes (it stops after the first sentence, as the real one is told).",
    )
    delay = forwarded("model", "delay", "Seconds the model waits before each word it streams.")
    prefill = forwarded(
        "model", "prefill", "Seconds the model's prefill takes (checking for a stop as it goes)."
    )
    band = forwarded(
        "lines",
        "band",
        "The band every quote is given (None: the real scorer's, over the fake embedder).",
    )

    @property
    def closed(self) -> int:
        """Model streams closed before their end (a cancelled answer)."""
        return self.model.closed

    def answer(
        self, question: str, layers: CacheLayers = ALL_LAYERS, *, stop: Stop | None = None
    ) -> Iterator[Event]:
        events = super().answer(question, layers, stop=stop)
        try:
            for event in events:
                if isinstance(event, AnswerDone):
                    self.done = event
                yield event
        finally:
            events.close()


class FakeLines(LineFinder):
    """The real line scorer (lines, score, span, nearest mails), whose band a test may set: a
    test of the screen says which kind of answer it shows, not how the scorer is calibrated."""

    band: str | None = None

    def find(self, question: str, vector, records, weights=None) -> Found:
        found = super().find(question, vector, records, weights)
        return found if self.band is None else replace(found, band=self.band)


class FakeSelection:
    """Retrieves k+1 candidates (newest first) and, as a reranker does, puts k of them in
    another order into the prompt (oldest first)."""

    def __init__(self, store: KnowledgeStore, k: int) -> None:
        self.store, self.k = store, k

    def candidates(self, question: str, vector, where=None) -> list[Hit]:
        assert not where, "FakeSelection does not filter: the TUI's fake answerer reads none"
        records = self.store.chunk_records(list(range(self.k + 1, 0, -1)))
        return [Hit(r.chunk_id, 1.0, 1, 1, r) for r in records]

    def rerank(self, question: str, hits: list[Hit]) -> list[Hit]:
        return sorted(hits, key=lambda h: h.chunk_id)[: self.k]


@dataclass
class FakeSegments:
    hashes: list[str]
    total: int


class FakeModel:
    """PromptCache's shape: prefill takes `prefill` s in pieces of PIECE_S, checking between them
    as the real one does, then stores one KV node per prompt chunk (100 tokens each, a 20-token
    question) in the real KV tree; decode streams `reply` word by word (`delay` s per word) up
    to the sentences asked for. `prefills`: begun; `stopped`: those the asker's stop ended."""

    PIECE_S = 0.01

    def __init__(self, kv: KVTree, delay: float) -> None:
        self.kv, self.delay = kv, delay
        self.reply = ANSWER
        self.prefill = 0.0
        self.closed = self.prefills = self.stopped = 0

    def segments(
        self, chunks: Sequence[str], question: str, evidence: Sequence[str] = ()
    ) -> FakeSegments:
        hashes = [segment_hash([zlib.crc32(chunk.encode()) >> 1]) for chunk in chunks]
        return FakeSegments(hashes, 100 * len(chunks) + 20)

    def checker(self, background: bool, stop: Stop | None = None) -> Callable[[], None]:
        def check() -> None:
            if stop is not None and stop():
                raise Stopped

        return check

    def stream(
        self,
        question: str,
        segments: FakeSegments,
        kv: bool,
        check: Callable[[], None],
        clock: Clock,
        sentences: int | None = None,
        *,
        keep: bool = True,
        user: bool = False,  # the real model's thread count: no bearing on what is written
    ) -> Iterator[KVReused | TokenStreamed]:
        self._prefill(check)
        hashes = segments.hashes
        restored = self.kv.longest_prefix(hashes).depth if kv else 0
        for depth in range(restored, len(hashes) if kv and keep else 0):
            self.kv.store(hashes[: depth + 1], 100 * (depth + 1), b"\0" * 1000)
        clock.lap("prefill")
        yield KVReused(100 * restored, segments.total)
        pieces: list[str] = []
        try:
            for word in self.reply.split(" "):
                time.sleep(self.delay)
                clock.mark("ttft")
                pieces.append(word + " ")
                yield TokenStreamed(word + " ")
                if sentences and sentences_ended("".join(pieces)) >= sentences:
                    break
        except GeneratorExit:
            self.closed += 1
            raise
        clock.lap("decode")

    def _prefill(self, check: Callable[[], None]) -> None:
        self.prefills += 1
        end = time.perf_counter() + self.prefill
        try:
            while time.perf_counter() < end:
                check()
                time.sleep(self.PIECE_S)
        except Stopped:
            self.stopped += 1
            raise


class _NoVerifier:
    active = False

    def check(self, question: str, vector, found=None) -> None:
        return None


class FakeMemory:
    """QAMemory's shape: every stored answer is fresh, and is stored as it comes."""

    def __init__(self, qa: QABank) -> None:
        self.qa = qa
        self.verifier = _NoVerifier()

    def is_fresh(self, entry: QAEntry) -> bool:
        return True

    def lookup(self, vector, check=None):
        """QAMemory.lookup: the bank's candidates, the first `check` accepts (all are fresh)."""
        return lookup_hit(self.qa, vector, check, self.is_fresh)

    def keep(
        self,
        question: str,
        vector,
        answer: str,
        hits: Sequence[Hit],
        origin: str,
        found=None,
        judged: bool = False,
    ) -> None:
        evidence = found.evidence() if found is not None else ()
        self.qa.add(question, vector, answer, [str(h.record.chunk_id) for h in hits],
                    evidence=evidence, judged=judged)  # fmt: skip


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
    """The shape of assistant.precompute.idle.Precompute: answers `questions` into the fake's QA
    bank, as its answer job does (precompute/cache_jobs.py)."""

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
            self.answer(question)
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

    def answer(self, question: str) -> None:
        """As precompute's answer job: the quote found, the sentence drafted and checked, and the
        question kept in the QA bank whatever its band (a hit finds its quote afresh)."""
        p = self.pipeline
        vector = p.embedder.embed_batch([question])[0]
        hits = p.select.rerank(question, p.select.candidates(question, vector))
        records = [h.record for h in hits]
        found = p.lines.find(question, vector, records)
        sentence = ""
        if not found.not_found:
            quoted = [e.sentence for e in found.lines]
            segments = p.model.segments([r.text for r in records], question, quoted)
            events = p.model.stream(question, segments, True, lambda: None, Clock(), 1)
            draft = "".join(e.text for e in events if isinstance(e, TokenStreamed))
            sentence = checked_sentence(draft, found, question, [r.text for r in records])[0].text
        p.memory.keep(question, vector, sentence, hits, "predicted")

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
    """The shape of assistant.precompute.idle.IdleScheduler; a test plays an idle run through its
    callbacks (from a thread of its own, as the real scheduler calls them)."""

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
