"""Answerer.answer(question, layers) → a stream of events: the user's path, nothing else.
QA bank (a verified hit) → retrieve → select (rerank, dedupe) → PromptCache (prefill with the KV
tree, decode) → evidence and support → remember in the QA bank."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, replace

from assistant.activity import Activity
from assistant.answer import support
from assistant.answer.evidence import Evidence
from assistant.answer.qa_memory import QAMemory
from assistant.answer.qa_verify import HitVerifier
from assistant.config import Settings
from assistant.events import (
    AnswerDone,
    ChunksOrdered,
    ChunksRetrieved,
    Event,
    KVReused,
    QAHitFound,
    TokenStreamed,
)
from assistant.knowledge.retrieval import Hit, Retriever
from assistant.knowledge.store import KnowledgeStore
from assistant.llm.runtime import LocalLLM
from assistant.prompt_cache import Clock, PromptCache
from assistant.rerank.reranker import Reranker
from assistant.rerank.selection import Selection
from cache.kv_tree import KVTree
from cache.prediction import History
from cache.protocols import Embedder
from cache.qa_bank import QABank, QAEntry
from cache.sentences import SentenceVectors


@dataclass(frozen=True)
class CacheLayers:
    """Which cache layers an answer uses: the QA bank (look up, remember) and the KV tree
    (restore, save). `NO_CACHE` is the naive path."""

    qa: bool = True
    kv: bool = True


ALL_LAYERS = CacheLayers()
NO_CACHE = CacheLayers(qa=False, kv=False)


class Answerer:
    def __init__(
        self,
        settings: Settings,
        store: KnowledgeStore,
        embedder: Embedder,
        select: Selection,
        cache: PromptCache,
        memory: QAMemory,
        activity: Activity | None = None,
        history: History | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.embedder = embedder
        self.select = select
        self.cache = cache
        self.memory = memory
        self.qa: QABank = memory.qa
        self.kv = cache.kv  # the KV tree (its stats are shown with the QA bank's)
        self.verifier: HitVerifier = memory.verifier
        self.activity = activity
        self.history = history

    def answer(self, question: str, layers: CacheLayers = ALL_LAYERS) -> Iterator[Event]:
        """A user question, using the cache `layers` given. While it runs, background
        precompute steps aside."""
        with self.activity.busy() if self.activity else nullcontext():
            asked = self.history.add(question) if self.history is not None else None
            yield from self._answer(question, layers, asked)

    def _answer(self, question: str, layers: CacheLayers, asked: int | None) -> Iterator[Event]:
        """`asked`: the question's history row, told the chunks it is answered from."""
        clock = Clock()
        vector = self.embedder.embed_batch([question])[0]
        clock.lap("embed")
        if layers.qa:
            verify = self.verifier.check(question, vector)
            hit = self.qa.lookup(vector, accept=self.memory.is_fresh, verify=verify)
            clock.lap("qa_lookup")
            if hit is not None:
                self._accessed(asked, hit.entry.chunk_ids)
                yield QAHitFound(hit.entry.question, hit.similarity, hit.entry.id)
                yield self._done_from_bank(question, hit.entry, clock)
                return
        hits = self.select.candidates(question, vector)
        clock.lap("retrieve")
        yield ChunksRetrieved(hits)
        hits = self.select.rerank(question, hits)
        clock.lap("rerank")
        yield ChunksOrdered([h.chunk_id for h in hits])
        self._accessed(asked, [h.chunk_id for h in hits])
        yield from self.generate(question, vector, hits, layers, clock)

    def _accessed(self, asked: int | None, chunk_ids: list[int]) -> None:
        if asked is not None and self.history is not None:
            self.history.retrieved(asked, chunk_ids)

    def refuse_hit(self, question: str) -> QAHitFound | None:
        """The user says the QA bank's answer for `question` is not what they asked: the entry
        it would serve is served from now on only to questions more similar than this one
        (cache/qa_bank.py). Returns what was refused, None when the bank serves nothing."""
        vector = self.embedder.embed_batch([question])[0]
        hit = self.qa.find(vector, self.verifier.check(question, vector))
        if hit is None:
            return None
        self.qa.refuse(hit.entry.id, hit.similarity)
        return QAHitFound(hit.entry.question, hit.similarity, hit.entry.id)

    def generate(
        self,
        question: str,
        vector,
        hits: list[Hit],
        layers: CacheLayers = ALL_LAYERS,
        clock: Clock | None = None,
    ) -> Iterator[Event]:
        """Prefill (reusing cached KV) and decode an answer from `hits`, in the order given."""
        clock = clock or Clock()
        segments, evidence = self.cache.prompt(question, vector, [h.record for h in hits])
        clock.lap("build")
        pieces: list[str] = []
        reused = KVReused(0, segments.total)
        check = self.cache.checker(background=False)
        for event in self.cache.stream(question, segments, layers.kv, check, clock):
            if isinstance(event, TokenStreamed):
                pieces.append(event.text)
            else:
                reused = event
            yield event
        answer = "".join(pieces).strip()
        if layers.qa:
            self.memory.keep(question, vector, answer, hits, "user")
        done = AnswerDone(
            question,
            answer,
            [h.record.ref() for h in hits],
            False,
            reused.reused_tokens,
            segments.total,
            clock.done(),
            kv_reuse=reused.mode,
            kv_repaired=reused.repaired,
        )
        yield self._checked(done, evidence, [h.record.text for h in hits], question)

    def _done_from_bank(self, question: str, entry: QAEntry, clock: Clock) -> AnswerDone:
        """The stored answer, with its evidence and support checked against its sources now."""
        records = self.store.chunk_records(entry.chunk_ids)
        vector = self.qa.vector(entry.id)
        evidence = self.cache.evidence(entry.question, vector, records)
        clock.mark("ttft")
        sources = [r.ref() for r in records]
        done = AnswerDone(question, entry.answer or "", sources, True, 0, 0, clock.done())
        texts = [r.text for r in records]
        return self._checked(done, evidence, texts, entry.question)

    def _checked(
        self, done: AnswerDone, evidence: list[Evidence], texts: Sequence[str], asked: str
    ) -> AnswerDone:
        quote = self.settings.answer.unsupported == "quote"
        return checked(done, evidence, list(texts), asked, self.cache.system_prompt, quote)


def checked(
    done: AnswerDone,
    evidence: list[Evidence],
    texts: list[str],
    asked: str,
    instruction: str,
    quote: bool = True,
) -> AnswerDone:
    """`done` with its evidence, and whether it is supported (assistant/answer/support.py): checked
    against `texts`, the question it answered (`asked`), its evidence lines and the prompt's
    `instruction`. With `quote`, an unsupported answer gives its place to the evidence lines,
    quoted, where they hold a term of the kind asked; the answer stays marked unsupported (the
    model could not write one its sources back; whether the lines answer is for the user to
    see), and `unsupported` keeps the draft's terms that no source holds."""
    lines = [e.sentence for e in evidence]
    supported, unsupported = support.check(done.answer, texts, asked, lines, instruction)
    done = replace(done, evidence=evidence, supported=supported, unsupported=unsupported)
    if supported or not quote or not support.quotable(lines, asked):
        return done
    return replace(done, answer=support.quote(lines), drafted=done.answer)


def assemble(
    settings: Settings,
    store: KnowledgeStore,
    embedder: Embedder,
    retriever: Retriever,
    llm: LocalLLM,
    qa: QABank,
    kv: KVTree,
    system_prompt: str,
    *,
    reranker: Reranker | None = None,
    sentences: SentenceVectors | None = None,
    activity: Activity | None = None,
    history: History | None = None,
) -> Answerer:
    """An Answerer over parts built elsewhere (tests and benches that wire their own store and
    model): its selection, PromptCache and QA memory are made here, as services.py makes them."""
    select = Selection(settings, retriever, reranker)
    cache = PromptCache(settings, llm, kv, system_prompt, embedder, sentences, activity)
    memory = QAMemory(store, qa, embedder, select, HitVerifier(retriever, settings.cache))
    return Answerer(settings, store, embedder, select, cache, memory, activity, history)
