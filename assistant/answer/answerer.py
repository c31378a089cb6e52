"""Answerer.answer(question, layers) → a stream of events: the user's path, nothing else.
QA bank (a verified hit whose quote still clears the bar) → retrieve → select (rerank, dedupe) →
the quote (answer/evidence.py, shown at once) → PromptCache (prefill with the KV tree, decode one
sentence) → the sentence checked against the quote (answer/shape.py) → remember in the QA bank."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, replace

from assistant.activity import Activity
from assistant.answer.evidence import Found, LineFinder, distinct_mails, mail_key
from assistant.answer.qa_memory import QAMemory
from assistant.answer.qa_verify import HitVerifier
from assistant.answer.shape import (
    NO_SENTENCE,
    Sentence,
    checked_sentence,
    final_band,
    first_sentence,
    mail_of,
    shown,
)
from assistant.config import Settings
from assistant.events import (
    AnswerDone,
    ChunksOrdered,
    ChunksRetrieved,
    Event,
    FiltersRead,
    KVReused,
    QAHitFound,
    QuoteFound,
    TokenStreamed,
)
from assistant.knowledge.retrieval import Hit, Retriever
from assistant.knowledge.store import ChunkRecord, KnowledgeStore
from assistant.llm.runtime import LocalLLM
from assistant.mail.reader import QueryReader
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
        lines: LineFinder,
        activity: Activity | None = None,
        history: History | None = None,
        reader: QueryReader | None = None,
    ) -> None:
        self.settings = settings
        self.reader = reader  # filters from query terms or the question's words (step 2)
        self.lines = lines
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
            served = self._from_bank(question, vector, hit.entry, clock) if hit else None
            if hit is not None and served is not None:
                self._accessed(asked, hit.entry.chunk_ids)
                yield QAHitFound(hit.entry.question, hit.similarity, hit.entry.id)
                yield from served
                return
        query = self.reader.read(question) if self.reader else None
        if query is not None and query.filters:
            matched = self.reader.count(query.filters)
            f = query.filters
            yield FiltersRead(query.text, f.as_dict(), f.describe(), matched, f.source)
            if not matched:  # said so, not answered from the whole mailbox
                yield from self.generate(question, vector, [], layers, clock)
                return
            if f.source == "terms" and query.text and query.text != question:
                question, vector = query.text, self.embedder.embed_batch([query.text])[0]
        where = query.filters if query is not None else None
        hits = self.select.candidates(question, vector, where=where)
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
        """The quote from `hits` (in the order given), shown at once; then, unless nothing was
        found, one model sentence (prefill reusing cached KV, decode), checked against the lines
        shown (answer/shape.py: shown plain, marked or dropped, and whether it confirms the
        quote)."""
        clock = clock or Clock()
        records = [h.record for h in hits]
        found = self.lines.find(question, vector, records)
        clock.mark("quote")
        yield quote_found(found)
        if found.not_found:
            yield self._done(question, found, records, clock)
            return
        quoted = [e.sentence for e in found.lines]
        segments = self.cache.segments([r.text for r in records], question, quoted)
        clock.lap("build")
        pieces: list[str] = []
        reused = KVReused(0, segments.total)
        check = self.cache.checker(background=False)
        for event in self.cache.stream(question, segments, layers.kv, check, clock, sentences=1):
            if isinstance(event, TokenStreamed):
                pieces.append(event.text)
            else:
                reused = event
            yield event
        draft = "".join(pieces).strip()
        sentence, faults = checked_sentence(draft, found, question, [r.text for r in records])
        if layers.qa and sentence.confirmed:  # the bank keeps the model's reading, to check again
            self.memory.keep(question, vector, first_sentence(draft), hits, "user")
        yield self._done(question, found, records, clock, draft, sentence, faults, reused)

    def _from_bank(self, question: str, vector, entry: QAEntry, clock: Clock) -> list | None:
        """A stored answer's events, its quote found afresh in its sources for this question;
        None unless the stored reading of the model still confirms that quote (the question
        then takes the whole path)."""
        records = self.store.chunk_records(entry.chunk_ids)
        found = self.lines.find(question, vector, records)
        texts = [r.text for r in records]
        sentence, faults = checked_sentence(entry.answer or "", found, question, texts)
        if not sentence.confirmed:
            return None
        clock.mark("quote")
        done = self._done(question, found, records, clock, "", sentence, faults)
        return [quote_found(found), replace(done, qa_hit=True)]

    def _done(
        self,
        question: str,
        found: Found,
        records: Sequence[ChunkRecord],
        clock: Clock,
        draft: str = "",
        sentence: Sentence = NO_SENTENCE,
        faults: Sequence[str] = (),
        reused: KVReused | None = None,
    ) -> AnswerDone:
        reused = reused or KVReused(0, 0)
        band = final_band(found, sentence)
        return AnswerDone(
            question,
            shown(found, sentence, band),
            sources_of(records, found),
            False,
            reused.reused_tokens,
            reused.prompt_tokens,
            clock.done(),
            evidence=[*found.lines, *found.also],
            supported=band != "weak" and not sentence.marked,
            unsupported=list(sentence.faults if sentence.marked else faults),
            kv_reuse=reused.mode,
            kv_repaired=reused.repaired,
            drafted=draft if faults and not sentence.text else "",
            span=found.span,
            mail=mail_of(found.record) if not found.not_found else {},
            not_found=found.not_found,
            sentence=sentence.text,
            band=band,
        )


def quote_found(found: Found) -> QuoteFound:
    mail = mail_of(found.record) if not found.not_found else {}
    nearest = [mail_of(r) for r in found.nearest[:3]]
    band = "none" if found.not_found else "answer"  # whether it is confirmed comes later
    also_mail = mail_of(found.also_record) if found.also else {}
    return QuoteFound(
        list(found.lines), found.span, mail, band, found.score, nearest, found.also, also_mail
    )


def sources_of(records: Sequence[ChunkRecord], found: Found) -> list[dict]:
    """One source per mail, in the prompt's order: the quoted chunk for the quoted mail."""
    quoted = found.record
    key = mail_key(quoted) if quoted is not None and not found.not_found else None
    return [(quoted if mail_key(r) == key else r).ref() for r in distinct_mails(records)]


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
    reader: QueryReader | None = None,
) -> Answerer:
    """An Answerer over parts built elsewhere (tests and benches that wire their own store and
    model): its selection, PromptCache and QA memory are made here, as services.py makes them."""
    select = Selection(settings, retriever, reranker)
    cache = PromptCache(settings, llm, kv, system_prompt, embedder, activity)
    memory = QAMemory(store, qa, embedder, select, HitVerifier(retriever, settings.cache))
    lines = LineFinder(embedder, sentences)
    return Answerer(
        settings, store, embedder, select, cache, memory, lines, activity, history, reader
    )
