"""answer(question) → a stream of events. The one place the stages meet:
QA bank → retrieve → order → KV tree → generate → populate both cache layers."""

from __future__ import annotations

import codecs
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from assistant.config import Settings
from assistant.knowledge.retrieval import Hit, Retriever
from assistant.knowledge.store import KnowledgeStore
from assistant.llm.prompt import Segments, build_segments, chat_frame
from assistant.llm.runtime import LLMError, LocalLLM
from cache.kv_tree import KVTree, segment_hash
from cache.protocols import Embedder
from cache.qa_bank import QABank


@dataclass(frozen=True)
class QAHitFound:
    question: str  # the stored question that matched
    similarity: float


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


Event = QAHitFound | ChunksRetrieved | ChunksOrdered | KVReused | TokenStreamed | AnswerDone


class Pipeline:
    def __init__(
        self,
        settings: Settings,
        store: KnowledgeStore,
        embedder: Embedder,
        retriever: Retriever,
        llm: LocalLLM,
        qa_bank: QABank,
        kv_tree: KVTree,
        system_prompt: str,
    ) -> None:
        self.settings = settings
        self.store = store
        self.embedder = embedder
        self.retriever = retriever
        self.llm = llm
        self.qa = qa_bank
        self.kv = kv_tree
        self.system_prompt = system_prompt
        self.frame = chat_frame(llm)

    def answer(self, question: str, use_cache: bool = True) -> Iterator[Event]:
        clock = _Clock()
        vector = self.embedder.embed_batch([question])[0]
        clock.lap("embed")
        if use_cache:
            hit = self.qa.lookup(vector)
            clock.lap("qa_lookup")
            if hit is not None:
                yield QAHitFound(hit.entry.question, hit.similarity)
                yield self._done_from_bank(question, hit.entry, clock)
                return
        hits = self.retriever.search(
            question, k=self.settings.answer.context_chunks, query_vector=vector
        )
        clock.lap("retrieve")
        yield ChunksRetrieved(hits)
        clock.lap("rerank")  # the fused order until the reranker lands
        yield ChunksOrdered([h.chunk_id for h in hits])
        yield from self.generate(question, vector, hits, use_cache, clock)

    def generate(
        self, question: str, vector, hits: list[Hit], use_cache: bool = True, clock=None
    ) -> Iterator[Event]:
        """Prefill (reusing cached KV) and decode an answer from `hits`, in the order given."""
        clock = clock or _Clock()
        segments = build_segments(
            self.llm, self.frame, self.system_prompt, [h.record.text for h in hits], question
        )
        pieces: list[str] = []
        with self.llm.lock:
            reused = self._prefill(segments, use_cache, clock)
            yield KVReused(reused, segments.total)
            decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
            tokens: list[int] = []
            for token in self.llm.greedy(self.settings.answer.max_tokens):
                if not tokens:
                    clock.mark("ttft")
                tokens.append(token)
                if is_looping(tokens):
                    break
                text = decoder.decode(self.llm.detokenize([token]))
                if text:
                    pieces.append(text)
                    yield TokenStreamed(text)
            clock.lap("decode")
        answer = "".join(pieces).strip()
        sources = [h.record.ref() for h in hits]
        if use_cache:
            self.qa.add(
                question,
                vector,
                answer,
                [str(s["chunk_id"]) for s in sources],
                self.store.version("chunks"),
            )
        yield AnswerDone(question, answer, sources, False, reused, segments.total, clock.done())

    def _prefill(self, segments: Segments, use_cache: bool, clock) -> int:
        """Restore the longest cached prefix, evaluate the rest segment by segment (saving each new
        segment's KV as a tree node), then the question. Returns the prompt tokens reused."""
        hashes = [segment_hash(s) for s in segments.prefix]
        start = self._restore(segments, hashes) if use_cache else 0
        if not start:
            self.llm.reset()
        clock.lap("kv_load")
        for depth in range(start, len(segments.prefix)):
            first = self.llm.n_past
            self.llm.eval(segments.prefix[depth])
            if use_cache:
                blob = self.llm.save_range(first, self.llm.n_past)
                self.kv.store(hashes[: depth + 1], self.llm.n_past, blob)
        self.llm.eval(segments.question)
        clock.lap("prefill")
        return sum(len(s) for s in segments.prefix[:start])

    def _restore(self, segments: Segments, hashes: list[str]) -> int:
        """Restore the longest cached run of prefix segments; return how many (0: none)."""
        restore = self.kv.longest_prefix(hashes)
        tokens = [t for seg in segments.prefix[: restore.depth] for t in seg]
        if not restore.depth or restore.n_tokens != len(tokens):
            return 0
        try:
            self.llm.restore_ranges(restore.blobs, tokens)
        except LLMError:
            return 0
        return restore.depth

    def _done_from_bank(self, question: str, entry, clock) -> AnswerDone:
        ids = [int(i) for i in entry.sources if str(i).isdigit()]
        sources = [r.ref() for r in self.store.chunk_records(ids)]
        clock.mark("ttft")
        return AnswerDone(question, entry.answer or "", sources, True, 0, 0, clock.done())


def is_looping(tokens: list[int], longest: int = 16) -> bool:
    """True when the tail is one span of 1..`longest` tokens repeated (3 times; short spans more,
    as digits are single tokens: "10000" is not a loop): a small model stuck in a loop.
    Stopping there is deterministic, so cached and uncached runs agree."""
    for period in range(1, longest + 1):
        repeats = {1: 8, 2: 5}.get(period, 3)
        if len(tokens) < period * repeats:
            continue
        tail = tokens[-period:]
        if all(
            tokens[-period * (i + 1) : len(tokens) - period * i] == tail for i in range(repeats)
        ):
            return True
    return False


class _Clock:
    """Stage timings: lap(name) adds the time since the previous lap to `name`."""

    def __init__(self) -> None:
        self.start = self.last = time.perf_counter()
        self.times: dict[str, float] = {}

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.times[name] = self.times.get(name, 0.0) + now - self.last
        self.last = now

    def mark(self, name: str) -> None:
        self.times.setdefault(name, time.perf_counter() - self.start)

    def done(self) -> dict[str, float]:
        self.times["total"] = time.perf_counter() - self.start
        self.times.setdefault("ttft", self.times["total"])  # no token: the first byte is the end
        for stage in (
            "embed",
            "qa_lookup",
            "retrieve",
            "rerank",
            "kv_load",
            "prefill",
            "decode",
            "ttft",
        ):
            self.times.setdefault(stage, 0.0)
        return {k: round(v, 6) for k, v in self.times.items()}
