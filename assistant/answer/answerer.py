"""Answerer.answer(question, layers) → a stream of events: the user's path, nothing else.
QA bank (a verified hit whose quote still clears the bar) → retrieve → select (rerank, dedupe) →
the quote (answer/evidence.py, shown at once) → PromptCache (prefill with the KV tree, decode one
sentence) → the sentence checked against the quote (answer/shape.py) → remember in the QA bank."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from assistant.answer.evidence import Found, LineFinder, prompt_records
from assistant.answer.judge import Judged, Reader, judge, promoted_to
from assistant.answer.qa_memory import QAMemory, find_hit
from assistant.answer.qa_verify import HitVerifier, confirms_entry, disagree, moved_off
from assistant.answer.shape import (
    answer_done,
    checked_sentence,
    final_band,
    first_sentence,
    quote_found,
)
from assistant.clock import Clock
from assistant.config import Settings
from assistant.events import (
    AnswerDone,
    ChunksOrdered,
    ChunksRetrieved,
    Event,
    FiltersRead,
    HitTightened,
    KVReused,
    QAHitFound,
    QuoteJudged,
    Stop,
    TokenStreamed,
)
from assistant.knowledge.retrieval import Hit
from assistant.knowledge.store import KnowledgeStore
from assistant.kv.prompt_cache import PromptCache
from assistant.mail.reader import QueryReader
from assistant.rerank.selection import Selection
from cache.prediction import History
from cache.protocols import Embedder
from cache.qa_bank import QABank
from cache.qa_entries import QAEntry, QAHit, Served
from cache.room import asking

if TYPE_CHECKING:  # handed in; precompute imports this module, not the reverse
    from assistant.precompute.activity import Activity


@dataclass(frozen=True)
class CacheLayers:
    """Which cache layers an answer uses: the QA bank (look up, remember) and the KV tree
    (restore, save). `NO_CACHE` is the naive path."""

    qa: bool = True
    kv: bool = True


ALL_LAYERS = CacheLayers()


@dataclass(frozen=True)
class Read:
    """What step 2 read of a question: the question the answer reads, its vector, the
    filters (None: the whole mailbox), the event that shows them (None without filters), and
    the text and vector the retriever ranks by (the question's, unless a filter stands for
    some of its words: mail/filters.Filters.unsaid)."""

    question: str
    vector: Any
    where: Any = None
    event: FiltersRead | None = None
    ranked_by: tuple[str, Any] | None = None

    def ranking(self) -> tuple[str, Any]:
        return self.ranked_by or (self.question, self.vector)


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
        judge: Reader | None = None,
    ) -> None:
        self.settings = settings
        self.reader = reader  # filters from query terms or the question's words (step 2)
        self.judge = judge  # the reader model's verdicts (answer/judge.py); None: the sentence's
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

    def answer(
        self,
        question: str,
        layers: CacheLayers = ALL_LAYERS,
        fresh: bool = False,
        *,
        stop: Stop | None = None,
    ) -> Iterator[Event]:
        """A user question, using the cache `layers` given. While it runs, background
        precompute steps aside. `fresh`: answered from scratch, and the answer the QA bank
        would have served is compared with it: an entry that would have served a wrong one is
        served from now on only to questions more similar than this one (HitTightened). What
        it keeps for later is skipped when the cache has no room (cache/room.py). `stop`: the
        asker's (Esc, quitting); once it turns true the model's prefill or decode raises
        Stopped within a piece, keeping nothing half-computed."""
        with asking(), self.activity.busy() if self.activity else nullcontext():
            asked = self.history.add(question) if self.history is not None else None
            served = ""
            for event in self._answer(question, layers, asked, fresh, stop):
                if isinstance(event, QAHitFound):
                    entry = self.qa.get(event.entry_id)
                    served = entry.origin if entry is not None else "user"
                elif isinstance(event, AnswerDone) and asked is not None:
                    # what it was saved, which the night balances its work by (planner.py)
                    self.history.saved(asked, event.kv_reused_tokens, event.prompt_tokens, served)
                yield event

    def _answer(
        self,
        question: str,
        layers: CacheLayers,
        asked: int | None,
        fresh: bool = False,
        stop: Stop | None = None,
    ) -> Iterator[Event]:
        """`asked`: the question's history row, told the chunks it is answered from. The quote
        is found first (no model); the QA bank then serves a stored answer only when its
        evidence is that quote (answer/qa_verify.py), else the model writes its sentence."""
        clock = Clock()
        vector = self.embedder.embed_batch([question])[0]
        clock.lap("embed")
        read = self._read(question, vector)
        if read.event is not None:
            yield read.event
            if not read.event.matched:  # said so, not answered from the whole mailbox
                yield from self.generate(question, vector, [], layers, clock)
                return
        question, vector = read.question, read.vector
        ranked, ranked_vector = read.ranking()
        hits = self.select.candidates(ranked, ranked_vector, where=read.where)
        clock.lap("retrieve")
        yield ChunksRetrieved(hits)
        hits = self.select.rerank(ranked, hits)
        clock.lap("rerank")
        yield ChunksOrdered([h.chunk_id for h in hits])
        self._accessed(asked, [h.chunk_id for h in hits])
        found = self.lines.find(question, vector, [h.record for h in hits])
        clock.mark("quote")
        yield quote_found(found, checking=self.judge is not None)
        if fresh:
            scored = found  # the quote a plain ask would look its stored answer up with
            found = yield from self._judged(question, found, clock, stop)
            yield from self._fresh(
                question, vector, hits, found, layers, clock, scored=scored, stop=stop
            )
            return
        hit = self.lookup(question, vector, found) if layers.qa else None
        clock.lap("qa_lookup")
        if hit is not None:
            if self.judge is not None and hit.entry.judged:  # a reader confirmed its line
                found = promoted_to(found, hit.entry.evidence, question)
                yield QuoteJudged("confirmed", 0.0, quote_found(found))
            elif self.judge is not None:  # kept with no reader, or the night's: judged now
                found = yield from self._judged_hit(question, found, hit.entry, clock, stop)
            self.qa.log_served(hit.entry.id, question, hit.similarity)
            yield QAHitFound(hit.entry.question, hit.similarity, hit.entry.id,
                             hit.entry.answered_at or 0.0)  # fmt: skip
            yield self._served(question, found, hits, hit.entry, clock)
            return
        found = yield from self._judged(question, found, clock, stop)
        yield from self._write(question, vector, hits, found, layers, clock, stop=stop)

    def _judged(
        self, question: str, found: Found, clock: Clock, stop: Stop | None = None
    ) -> Iterator[Event]:
        """The reader's verdict on the quote shown (QuoteJudged), and the quote it leaves;
        without a reader, the quote as it is. Returns the quote (a generator's value)."""
        if self.judge is None:
            return found
        started = time.perf_counter()
        judged: Judged = judge(self.judge, question, found, stop)
        clock.mark("verdict")
        seconds = time.perf_counter() - started
        yield QuoteJudged(judged.verdict, judged.margin, quote_found(judged.found), seconds)
        return judged.found

    def _judged_hit(
        self, question: str, found: Found, entry: QAEntry, clock: Clock, stop: Stop | None = None
    ) -> Iterator[Event]:
        """The reader's verdict on a hit no reader judged, as on a fresh answer's quote (the
        sentence decides the mark unless it confirms); once it confirms the entry's own line,
        the entry is served confirmed from then on. Returns the quote."""
        judged = yield from self._judged(question, found, clock, stop)
        if confirms_entry(entry, found, judged):
            self.qa.mark_judged(entry.id)
        return judged

    def _fresh(
        self, question: str, vector, hits: list[Hit], found: Found, layers: CacheLayers,
        clock: Clock, background: bool = False, scored: Found | None = None,
        stop: Stop | None = None,
    ) -> Iterator[Event]:  # fmt: skip
        """The answer from scratch; then the bank's would-be hit compared with it. `scored`:
        the line scorer's quote, where the reader judged it into `found`: the hit a plain ask
        would serve is the one looked up with it, and one the reader moved off or found
        nothing in is a wrong answer too."""
        scored = scored or found
        would = None
        if layers.qa and not scored.not_found:
            would = find_hit(self.qa, vector, self.verifier.check(question, vector, scored))
        done = None
        for event in self._write(question, vector, hits, found, layers, clock, background, stop):
            done = event if isinstance(event, AnswerDone) else done
            yield event
        if would is not None and done is not None:
            served = self._served(question, scored, hits, would.entry, clock)
            if moved_off(scored, found) or disagree(served, done):
                self.qa.refuse(would.entry.id, would.similarity)
                yield HitTightened(would.entry.question, would.similarity, would.entry.id)

    def recheck(self, served: Served) -> bool:
        """The night's self-check of one served hit: its question answered afresh, as
        background work (a user question pre-empts it: Preempted), and the entry tightened if
        it served a wrong answer. True when it was tightened."""
        clock = Clock()
        vector = self.embedder.embed_batch([served.question])[0]
        hits, found = self.quote(served.question, vector)
        events = self._fresh(served.question, vector, hits, found, ALL_LAYERS, clock, True)
        tightened = any(isinstance(e, HitTightened) for e in events)
        self.qa.checked(served.id)
        return tightened

    def lookup(self, question: str, vector, found: Found) -> QAHit | None:
        """The stored answer whose evidence this question's quote is (none when nothing was
        found: there is no answer to remember either)."""
        if found.not_found:
            return None
        return self.memory.lookup(vector, self.verifier.check(question, vector, found))

    def quote(self, question: str, vector) -> tuple[list[Hit], Found]:
        """The prompt's chunks and the quote found in them, as an answer finds them (no
        model): what the QA bank's evidence check compares."""
        read = self._read(question, vector)
        if read.event is not None and not read.event.matched:
            return [], self.lines.find(question, vector, [])
        question, vector = read.question, read.vector
        ranked, ranked_vector = read.ranking()
        hits = self.select.candidates(ranked, ranked_vector, where=read.where)
        hits = self.select.rerank(ranked, hits)
        return hits, self.lines.find(question, vector, [h.record for h in hits])

    def _read(self, question: str, vector) -> Read:
        """Step 2: the filters of the question's terms or words (assistant/mail/reader.py),
        and the text the retriever then ranks by (its terms taken out; of its words, those a
        narrowing filter of people stands for). Typed terms are not the question's words, so
        the rest of the answer reads the text without them; words leave the question whole."""
        query = self.reader.read(question) if self.reader else None
        if query is None or not query.filters:
            return Read(question, vector)
        f = query.filters
        event = FiltersRead(query.text, f.as_dict(), f.describe(), self.reader.count(f), f.source)
        if not query.text or query.text == question:
            return Read(question, vector, f, event)
        text, text_vector = query.text, self.embedder.embed_batch([query.text])[0]
        if f.source == "terms":  # the terms are not words of the question: all of it goes
            return Read(text, text_vector, f, event)
        return Read(question, vector, f, event, (text, text_vector))

    def _accessed(self, asked: int | None, chunk_ids: list[int]) -> None:
        if asked is not None and self.history is not None:
            self.history.retrieved(asked, chunk_ids)

    def refuse_hit(self, question: str) -> QAHitFound | None:
        """The user says the QA bank's answer for `question` is not what they asked: the entry
        it would serve is served from now on only to questions more similar than this one
        (cache/qa_bank.py). Returns what was refused, None when the bank serves nothing."""
        vector = self.embedder.embed_batch([question])[0]
        _, found = self.quote(question, vector)
        hit = find_hit(self.qa, vector, self.verifier.check(question, vector, found))
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
        found = self.lines.find(question, vector, [h.record for h in hits])
        clock.mark("quote")
        yield quote_found(found)
        yield from self._write(question, vector, hits, found, layers, clock)

    def _write(
        self,
        question: str,
        vector,
        hits: list[Hit],
        found: Found,
        layers: CacheLayers,
        clock: Clock,
        background: bool = False,
        stop: Stop | None = None,
    ) -> Iterator[Event]:
        """The model's sentence for a quote already shown, checked, and remembered with the
        quote's lines as its evidence. `background`: night work, which a user question
        pre-empts; `stop`: the asker's (Stopped)."""
        records = [h.record for h in hits]
        if found.not_found:
            yield answer_done(question, found, records, clock)
            return
        quoted = [e.sentence for e in found.lines]
        read = prompt_records(records, found, self.settings.answer.prompt_chunks)
        segments = self.cache.segments([r.text for r in read], question, quoted)
        clock.lap("build")
        pieces: list[str] = []
        reused = KVReused(0, segments.total)
        check = self.cache.checker(background, stop)
        user = not background
        for event in self.cache.stream(
            question, segments, layers.kv, check, clock, sentences=1, user=user
        ):
            if isinstance(event, TokenStreamed):
                pieces.append(event.text)
            else:
                reused = event
            yield event
        draft = "".join(pieces).strip()
        sentence, faults = checked_sentence(draft, found, question, [r.text for r in read])
        doubted = self.judge is not None and final_band(found, sentence) != "answer"
        if layers.qa and not doubted:  # kept, and checked again when it is served
            judged = self.judge is not None  # else a reader judges it when it is first served
            self.memory.keep(question, vector, first_sentence(draft), hits, "user", found, judged)
        yield answer_done(question, found, records, clock, draft, sentence, faults, reused)

    def _served(
        self, question: str, found: Found, hits: list[Hit], entry: QAEntry, clock: Clock
    ) -> AnswerDone:
        """A stored answer for this question's quote: the stored sentence checked against the
        quote as a fresh one would be (plain, marked or dropped)."""
        records = [h.record for h in hits]
        texts = [r.text for r in records]
        sentence, faults = checked_sentence(entry.answer or "", found, question, texts)
        done = answer_done(question, found, records, clock, "", sentence, faults)
        return replace(done, qa_hit=True)
