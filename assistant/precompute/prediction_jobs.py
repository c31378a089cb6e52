"""The precompute jobs that predict questions (a part of Handlers): written after a chunk, in the
user's style after the chunks near their recent questions, or from the knowledge abstract; each new
one is queued as a populate job with its vector."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator, Sequence

import numpy as np

from assistant.knowledge.store import KnowledgeStore
from assistant.kv.prompt_cache import PromptCache
from assistant.rerank.selection import Selection
from assistant.rerank.selfcheck import RerankCheck
from cache.jobs import JobQueue
from cache.prediction import History, KnowledgeAbstract, clean_question, drop_known, parse_questions
from cache.protocols import Embedder
from cache.qa_bank import QABank

SEEDS = ("When", "Who", "What")  # question words that start detail questions (prompts/README.md)


class PredictionJobs:
    """Mixed into Handlers: uses its parts, its `prompts`, `seeds` and `kv`, its priority() and
    the KV headroom check _room_for() (CacheJobs)."""

    cache: PromptCache
    select: Selection
    store: KnowledgeStore
    queue: JobQueue
    abstract: KnowledgeAbstract
    history: History
    check: RerankCheck | None
    qa: QABank
    embedder: Embedder
    prompts: dict[str, str]
    seeds: Sequence[str]
    kv: bool

    def _predict_detail(self, payload: dict) -> None:
        records = self.store.chunk_records([payload["chunk"]])
        if records:  # else the chunk was deleted since
            questions = self._questions_from(records[0].text, self.seeds)
            self._queue_questions(questions, "predicted:detail")
            if self.check is not None:
                self.check.add_probes(questions, payload["chunk"])

    def _predict_history(self, payload: dict) -> None:
        """Questions in the user's style about what the user asks about: written after the chunks
        that rank near their recent questions, opened with the question words they use.
        (Asked to continue a list of their questions, SmolLM2-135M repeats one generic question.)
        """
        recent = self.history.recent(10)
        seeds = openers(recent) or list(self.seeds)
        questions: list[str] = []
        for chunk in self._chunks_near(recent[::-1]):
            if len(questions) >= payload["n"]:
                break
            questions += self._questions_from(chunk, seeds)
        self._queue_questions(questions[: payload["n"]], "predicted:history")

    def _chunks_near(self, questions: Sequence[str]) -> Iterator[str]:
        seen: set[int] = set()
        k = 2 * self.select.settings.answer.context_chunks
        for question in questions:
            vector = self.embedder.embed_batch([question])[0]
            for hit in self.select.retriever.search(question, k=k, query_vector=vector):
                if hit.chunk_id not in seen:
                    seen.add(hit.chunk_id)
                    yield hit.record.text

    def _questions_from(self, chunk: str, seeds: Sequence[str]) -> list[str]:
        """Questions written after `chunk`. Its [system, chunk] node is read from the KV tree,
        and kept there only within the headroom: a prediction never evicts the planned nodes."""
        prompts = [self.prompts["detail"].format(seed=s).rstrip("\n") for s in seeds]
        kv = self.kv and (self._room_for(1) or self.cache.kv_cached([chunk]))
        outputs = self.cache.continue_after_chunk(chunk, prompts, 24, kv=kv)
        cleaned = [clean_question(f"{s} {o}") for s, o in zip(seeds, outputs, strict=True)]
        return [q for q in cleaned if q]

    def _predict_general(self, payload: dict) -> None:
        prompt = self.prompts["general"].format(abstract=self.abstract.render())
        text = self.cache.complete(prompt.rstrip("\n"), max_tokens=24 * payload["n"])
        self._queue_questions(parse_questions(text)[: payload["n"]], "predicted:general")

    def _queue_questions(self, questions: Sequence[str], origin: str) -> None:
        """Queue a populate job per new question, with the vector drop_known embedded it to
        (the job uses it rather than embedding the question again)."""
        qa = self.qa
        for question, vector in drop_known(questions, self.embedder, qa, qa.threshold):
            key = "populate:" + hashlib.sha1(question.lower().encode()).hexdigest()[:16]
            payload = {"question": question, "origin": origin, **self._packed(vector)}
            self.queue.enqueue("populate", key, payload, self.priority("populate"))

    def _packed(self, vector: np.ndarray) -> dict[str, str]:
        """A question's vector for a job's payload (JSON), with the encoder that made it."""
        raw = np.asarray(vector, dtype=np.float32).tobytes()
        return {"vector": base64.b64encode(raw).decode("ascii"), "encoder": self.embedder.name}

    def _unpacked(self, payload: dict) -> np.ndarray:
        """The payload's question vector; embedded now when the job has none (queued by an older
        version) or another encoder made it."""
        if payload.get("vector") and payload.get("encoder") == self.embedder.name:
            return np.frombuffer(base64.b64decode(payload["vector"]), dtype=np.float32).copy()
        return self.embedder.embed_batch([payload["question"]])[0]


def openers(questions: Sequence[str], most: int = 3) -> list[str]:
    """The words the user starts questions with, most used first ("When", "Who" …)."""
    words = [q.split()[0].capitalize() for q in questions if q.split()]
    counts = {w: words.count(w) for w in dict.fromkeys(words)}
    return sorted(counts, key=lambda w: -counts[w])[:most]
