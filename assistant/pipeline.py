"""answer(question) → a stream of events. The one place the stages meet:
QA bank → retrieve → order → KV tree → generate → populate both cache layers."""

from __future__ import annotations

import codecs
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field, replace

from assistant import support
from assistant.activity import Activity
from assistant.config import Settings
from assistant.evidence import Evidence, chunk_vectors, select_evidence
from assistant.knowledge.retrieval import Hit, Retriever
from assistant.knowledge.store import ChunkRecord, KnowledgeStore
from assistant.llm.decoding import RepeatGuard, sentences_ended
from assistant.llm.prompt import Segments, build_segments, chat_frame
from assistant.llm.reuse import Reused, parse_repair, place, repair
from assistant.llm.runtime import LLMError, LocalLLM
from assistant.qa_verify import HitVerifier
from assistant.rerank import selection
from assistant.rerank.reranker import Reranker
from cache.kv_tree import KVTree, segment_hash
from cache.prediction import History
from cache.protocols import Embedder
from cache.qa_bank import QABank, QAEntry
from cache.sentences import SentenceVectors

log = logging.getLogger(__name__)

# Tokens per llama eval call (~0.3 s here): a background job checks between pieces whether a user
# is waiting, so it steps aside within a second. Logits do not depend on the piece size (checked
# in tests), so cached and uncached runs still agree token for token.
PIECE = 32


class Preempted(Exception):
    """A background job stepped aside for a user question; it goes back in the queue."""


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
    mode: str = "exact"  # "any-order": some chunks' KV was placed out of its cached place
    repaired: int = 0  # of the reused tokens, re-decoded in place (the repair policy)
    segments: int = 0  # prompt segments reused: the system prompt, then chunks


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
    # the sentences of the sources that answer the question (shown under the answer)
    evidence: list[Evidence] = field(default_factory=list)
    # the answer holds the kind of term asked for, and every name, number and date of it appears
    # in the sources or the question (assistant/support.py)
    supported: bool = True
    unsupported: list[str] = field(default_factory=list)  # the terms that do not
    kv_reuse: str = "exact"  # as KVReused.mode
    kv_repaired: int = 0
    # the model's own answer when it was not supported and `answer` quotes the evidence lines
    # instead ([answer] unsupported = "quote"); "" otherwise
    drafted: str = ""


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
        activity: Activity | None = None,
        history: History | None = None,
        reranker: Reranker | None = None,
        verifier: HitVerifier | None = None,
        sentences: SentenceVectors | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.embedder = embedder
        self.retriever = retriever
        self.llm = llm
        self.qa = qa_bank
        self.kv = kv_tree
        self.system_prompt = system_prompt
        self.reranker = reranker
        self.sentences = sentences  # the evidence's sentence vectors per chunk, kept
        self.frame = chat_frame(llm)
        self.activity = activity
        self.history = history
        self.verifier = verifier or HitVerifier(retriever, settings.cache)

    def answer(
        self, question: str, use_cache: bool = True, *, qa: bool = True, kv: bool = True
    ) -> Iterator[Event]:
        """A user question. `use_cache=False` is the naive path; `qa`/`kv` switch one layer off.
        While it runs, background precompute steps aside."""
        with self.activity.busy() if self.activity else nullcontext():
            asked = self.history.add(question) if self.history is not None else None
            yield from self._answer(question, qa and use_cache, kv and use_cache, asked)

    def _answer(self, question: str, qa: bool, kv: bool, asked: int | None) -> Iterator[Event]:
        """`asked`: the question's history row, told the chunks it is answered from."""
        clock = _Clock()
        vector = self.embedder.embed_batch([question])[0]
        clock.lap("embed")
        if qa:
            verify = self.verifier.check(question, vector)
            hit = self.qa.lookup(vector, accept=self.is_fresh, verify=verify)
            clock.lap("qa_lookup")
            if hit is not None:
                self._accessed(asked, hit.entry.chunk_ids)
                yield QAHitFound(hit.entry.question, hit.similarity)
                yield self._done_from_bank(question, hit.entry, clock)
                return
        hits = self.candidates(question, vector)
        clock.lap("retrieve")
        yield ChunksRetrieved(hits)
        hits = self.rerank(question, hits)
        clock.lap("rerank")
        yield ChunksOrdered([h.chunk_id for h in hits])
        self._accessed(asked, [h.chunk_id for h in hits])
        yield from self.generate(question, vector, hits, kv=kv, qa=qa, clock=clock)

    def _accessed(self, asked: int | None, chunk_ids: list[int]) -> None:
        if asked is not None and self.history is not None:
            self.history.retrieved(asked, chunk_ids)

    def retrieve(self, question: str, vector, background: bool = False) -> list[Hit]:
        """The chunks a prompt for `question` gets, in prompt order (reranked when it is on):
        background jobs fill the caches with the same prefixes the user's question will use.
        A `background` rerank raises Preempted when a user question arrives."""
        hits = self.candidates(question, vector, background)
        return self.rerank(question, hits, self._checker(background))

    def candidates(self, question: str, vector, background: bool = False) -> list[Hit]:
        """The fused hits, near-duplicates merged: the prompt's chunks, or the reranker's wider
        candidate set (rerank/selection.py: `search --rerank` selects the same way). A
        `background` (predicted) question counts `predicted_weight` of an asked one in the
        large index's hot/cold plan."""
        k = selection.width(self.settings.answer.context_chunks, self.reranker)
        duplicates = self.settings.answer.duplicates
        weight = self.settings.retrieval.predicted_weight if background else 1.0
        retriever = self.retriever
        return selection.candidates(retriever, question, k, duplicates, vector, "hybrid", weight)

    def rerank(
        self, question: str, hits: list[Hit], check: Callable[[], None] | None = None
    ) -> list[Hit]:
        """The prompt's chunks in prompt order: the reranker orders `candidates`' distinct hits,
        so near-duplicates never take two slots here either."""
        k = self.settings.answer.context_chunks
        if self.reranker is None:
            return hits[:k]
        return self.reranker.rerank(question, hits, k, check)

    def is_fresh(self, entry: QAEntry) -> bool:
        """False when the mail changed under a stored answer: one of its sources is gone, or a
        chunk newer than the answer now ranks in its question's top-k. Cheap when nothing was
        imported since (one max(id) query); a confirmed entry is not checked again."""
        ids = entry.chunk_ids
        newest = self.store.max_chunk_id()
        if len(self.store.chunk_records(ids)) != len(ids):
            return False
        if entry.chunk_watermark >= newest:
            return True
        top = self.retrieve(entry.question, self.qa.vector(entry.id))
        if any(h.chunk_id > entry.chunk_watermark for h in top):
            return False
        self.qa.confirm(entry.id, newest)
        return True

    def generate(
        self,
        question: str,
        vector,
        hits: list[Hit],
        use_cache: bool = True,
        clock=None,
        *,
        kv: bool = True,
        qa: bool = True,
        background: bool = False,
        origin: str = "user",
    ) -> Iterator[Event]:
        """Prefill (reusing cached KV) and decode an answer from `hits`, in the order given.
        A `background` run raises Preempted when a user question arrives."""
        clock = clock or _Clock()
        kv, qa = kv and use_cache, qa and use_cache
        check = self._checker(background)
        texts = [h.record.text for h in hits]
        evidence = self.evidence(question, vector, [h.record for h in hits])
        segments = self._segments(texts, question, [e.sentence for e in evidence])
        pieces: list[str] = []
        clock.lap("build")
        with self.llm.lock:
            clock.lap("wait")  # for the model: a background job steps aside within a piece
            reused = self._prefill(segments, kv, clock, check)
            yield KVReused(
                reused.tokens, segments.total, reused.mode, reused.repaired, reused.segments
            )
            tokens = self._answer_tokens(question)
            limit = self.settings.answer.max_sentences
            for text in self._decode(self.settings.answer.max_tokens, check, clock, tokens):
                pieces.append(text)
                yield TokenStreamed(text)
                if limit and sentences_ended("".join(pieces)) >= limit:
                    break
            clock.lap("decode")
        answer = "".join(pieces).strip()
        sources = [h.record.ref() for h in hits]
        # while an import still embeds, dense search saw only part of the mail: not remembered
        if qa and self.store.all_embedded(self.embedder.name):
            chunk_ids = [str(s["chunk_id"]) for s in sources]
            self.remember(question, vector, answer, chunk_ids, origin)
        done = AnswerDone(
            question,
            answer,
            sources,
            False,
            reused.tokens,
            segments.total,
            clock.done(),
            kv_reuse=reused.mode,
            kv_repaired=reused.repaired,
        )
        yield self._checked(done, evidence, texts, question)

    def evidence(self, question: str, vector, records: Sequence[ChunkRecord]) -> list[Evidence]:
        """The sentences of `records` that best match the question (none when switched off)."""
        limit = self.settings.answer.evidence_sentences
        if limit <= 0 or not records:
            return []
        return select_evidence(
            question, vector, list(records), self.embedder, limit=limit, stored=self.sentences
        )

    def keep_sentences(self, records: Sequence[ChunkRecord]) -> None:
        """Precompute: store the sentence vectors the evidence of a question using these chunks
        will read (nothing when evidence is off or no store is wired)."""
        if self.sentences is not None and self.settings.answer.evidence_sentences > 0:
            chunk_vectors(records, self.embedder, self.sentences)

    def remember(
        self, question: str, vector, answer: str | None, sources: list[str], origin: str = "user"
    ) -> int:
        """Store an answer (or a pending entry) in the QA bank. A pending or stale entry for the
        same question (as similar as a hit needs, and passing the guard, so that a near-miss
        never overwrites another question's entry) is filled in rather than duplicated."""
        version, watermark = self.store.version("chunks"), self.store.max_chunk_id()
        near = self.qa.nearest(vector, answered_only=False)
        floor = min(self.qa.floor(self.verifier.active), 0.999)
        same = (
            near is not None
            and near.similarity >= floor
            and self.verifier.same_question(question, near.entry)
        )
        if same and (near.entry.answer is None or near.entry.stale):
            if answer is not None:
                self.qa.set_answer(near.entry.id, answer, sources, version, watermark)
            return near.entry.id
        return self.qa.add(question, vector, answer, sources, version, origin, watermark)

    def _answer_tokens(self, question: str) -> Callable[[int, Callable], Iterator[int]]:
        """The answer's decoder: greedy, or context-aware against the question alone."""
        answer = self.settings.answer
        if answer.decoding != "cad":
            return self.llm.greedy
        plain = self._segments([], question)
        tokens = plain.system + plain.question
        return lambda n, ban: self.llm.contrastive(n, tokens, answer.cad_alpha, ban)

    def _decode(
        self, max_tokens: int, check: Callable[[], None], clock=None, tokens_of=None
    ) -> Iterator[str]:
        """Greedy tokens as text, under the repeat guard: in "stop" mode the last n-1 tokens are
        held back until they are known not to begin a repeat (then they are dropped)."""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        guard = self._guard()
        tokens: list[int] = []
        shown = 0

        def show(upto: int) -> Iterator[str]:
            nonlocal shown
            upto = max(shown, upto)  # while fewer than `holds_back` tokens, `upto` is negative
            for token in tokens[shown:upto]:
                text = decoder.decode(self.llm.detokenize([token]))
                if text:
                    yield text
            shown = upto

        for token in (tokens_of or self.llm.greedy)(max_tokens, guard.banned):
            if not tokens and clock is not None:
                clock.mark("ttft")
            tokens.append(token)
            if is_looping(tokens) or guard.repeated(tokens):
                return
            yield from show(len(tokens) - guard.holds_back)
            check()
        yield from show(len(tokens))

    def _guard(self) -> RepeatGuard:
        answer = self.settings.answer
        return RepeatGuard(answer.repeat_guard, answer.repeat_ngram, self.llm.is_word)

    def _segments(
        self, chunks: Sequence[str], question: str, evidence: Sequence[str] = ()
    ) -> Segments:
        """The prompt's segments, chunks in the configured order: every path (answers,
        precompute's prefills, the KV checks) orders them here, so their KV paths match."""
        ordered = list(chunks)
        if self.settings.answer.chunk_order == "best-last":
            ordered.reverse()
        place = self.settings.answer.evidence_place
        system = self.system_prompt
        return build_segments(self.llm, self.frame, system, ordered, question, evidence, place)

    def user_waiting(self) -> bool:
        """A user question is waiting for the model (background work steps aside)."""
        return self.activity is not None and self.activity.user_waiting()

    def _checker(self, background: bool) -> Callable[[], None]:
        def check() -> None:
            if background and self.user_waiting():
                raise Preempted

        return check

    def _eval(self, tokens: Sequence[int], check: Callable[[], None]) -> None:
        for start in range(0, len(tokens), PIECE):
            check()
            self.llm.eval(tokens[start : start + PIECE])

    def _prefill(self, segments: Segments, kv: bool, clock, check) -> Reused:
        """Restore the longest cached prefix, evaluate the rest segment by segment (saving each new
        segment's KV as a tree node), then the question. With [cache] reuse = "any-order" a chunk
        with a [system, chunk] node is placed instead of evaluated."""
        any_order = kv and self.settings.cache.reuse == "any-order"
        reused = self._prefill_prefix(segments, kv, check, any_order)
        clock.lap("kv_load")
        self._eval(segments.evidence, check)
        self._eval(segments.question, check)
        clock.lap("prefill")
        return reused

    def _prefill_prefix(
        self, segments: Segments, kv: bool, check, any_order: bool = False
    ) -> Reused:
        hashes = [segment_hash(s) for s in segments.prefix]
        start = self._restore(segments, hashes) if kv else 0
        if not start:
            self.llm.reset()
        placed: list[tuple[int, int]] = []  # (position, length) of chunks placed any-order
        for depth in range(start, len(segments.prefix)):
            first, tokens = self.llm.n_past, segments.prefix[depth]
            if any_order and depth > 1 and self._place(hashes[0], hashes[depth], tokens):
                placed.append((first, len(tokens)))
                continue
            self._eval(tokens, check)
            if kv and not placed:  # a node holds only KV an uncached run computes
                blob = self.llm.save_range(first, self.llm.n_past)
                self.kv.store(hashes[: depth + 1], self.llm.n_past, blob)
        restored = sum(len(s) for s in segments.prefix[:start])
        n_placed = sum(n for _, n in placed)
        policy = parse_repair(self.settings.cache.repair)
        repaired = repair(self.llm, policy, placed, check)
        return Reused(restored + n_placed, n_placed, repaired, start + len(placed))

    # -- background work (the idle scheduler's jobs) -------------------------------------------

    def prefill(self, chunks: Sequence[str], background: bool = True) -> tuple[int, int]:
        """Strategy 1: put the KV of [system, chunks…] in the tree, no question, no decoding.
        Returns (tokens reused, prefix tokens)."""
        segments = self._segments(chunks, "")
        with self.llm.lock:
            reused = self._prefill_prefix(segments, True, self._checker(background))
        return reused.tokens, sum(len(s) for s in segments.prefix)

    def kv_cached(self, chunks: Sequence[str]) -> bool:
        """The whole [system, chunks…] prefix is in the KV tree."""
        segments = self._segments(chunks, "")
        hashes = [segment_hash(s) for s in segments.prefix]
        return self.kv.longest_prefix(hashes).depth == len(hashes)

    def continue_after_chunk(
        self,
        chunk: str,
        prompts: Sequence[str],
        max_tokens: int,
        background: bool = True,
        kv: bool = True,
    ) -> list[str]:
        """For each prompt, the greedy continuation (to the end of its line) of
        [system, chunk, prompt]. The [system, chunk] prefix is read from, or added to, the KV
        tree (unless `kv` is off): the node a later question retrieving this chunk first will
        reuse."""
        check = self._checker(background)
        segments = self._segments([chunk], "")
        tokens = [t for seg in segments.prefix for t in seg]
        out = []
        with self.llm.lock:
            self._prefill_prefix(segments, kv, check)
            base = self.llm.save_range(0, self.llm.n_past)
            for prompt in prompts:
                self.llm.restore_ranges([base], tokens)
                out.append(self._continue_line(self.llm.tokenize(prompt), max_tokens, check))
        return out

    def complete(self, text: str, max_tokens: int, background: bool = True) -> str:
        """A plain greedy completion of `text` (no chat frame), up to a blank line."""
        check = self._checker(background)
        with self.llm.lock:
            self.llm.reset()
            tokens = self.llm.tokenize(text, first=True)
            self._eval(tokens, check)
            return self._continue_line(None, max_tokens, check, stop="\n\n")

    def _continue_line(self, tokens, max_tokens: int, check, stop: str = "\n") -> str:
        if tokens:
            self._eval(tokens, check)
        text = ""
        for piece in self._decode(max_tokens, check):
            text += piece
            if stop in text:
                break
        return text.split(stop, 1)[0]

    def _place(self, system: str, chunk: str, tokens: Sequence[int]) -> bool:
        """Any-order reuse: the chunk's [system, chunk] node KV, moved to the prompt's end."""
        return place(self.llm, self.kv.node_blob([system, chunk]), tokens)

    def _restore(self, segments: Segments, hashes: list[str]) -> int:
        """Restore the longest cached run of prefix segments; return how many (0: none)."""
        restore = self.kv.longest_prefix(hashes)
        tokens = [t for seg in segments.prefix[: restore.depth] for t in seg]
        if not restore.depth or restore.n_tokens != len(tokens):
            return 0
        try:
            self.llm.restore_ranges(restore.blobs, tokens)
        except LLMError as exc:
            log.warning("cached KV not restored (%s); the prompt is computed instead", exc)
            return 0
        return restore.depth

    def _done_from_bank(self, question: str, entry, clock) -> AnswerDone:
        """The stored answer, with its evidence and support checked against its sources now."""
        records = self.store.chunk_records(entry.chunk_ids)
        vector = self.qa.vector(entry.id)
        evidence = self.evidence(entry.question, vector, records)
        clock.mark("ttft")
        sources = [r.ref() for r in records]
        done = AnswerDone(question, entry.answer or "", sources, True, 0, 0, clock.done())
        texts = [r.text for r in records]
        return self._checked(done, evidence, texts, entry.question)

    def _checked(
        self, done: AnswerDone, evidence: list[Evidence], texts: list[str], asked: str
    ) -> AnswerDone:
        quote = self.settings.answer.unsupported == "quote"
        return checked(done, evidence, texts, asked, self.system_prompt, quote)


def checked(
    done: AnswerDone,
    evidence: list[Evidence],
    texts: list[str],
    asked: str,
    instruction: str,
    quote: bool = True,
) -> AnswerDone:
    """`done` with its evidence, and whether it is supported (assistant/support.py): checked
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
            "wait",
            "kv_load",
            "prefill",
            "decode",
            "ttft",
        ):
            self.times.setdefault(stage, 0.0)
        return {k: round(v, 6) for k, v in self.times.items()}
