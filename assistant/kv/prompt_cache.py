"""PromptCache: a [system, chunk…, evidence, question] prompt built, prefilled restoring what the
KV tree holds (saving each segment it computes as a tree node), and decoded. The answer path
(answer/answerer.py, which chooses the evidence lines) and precompute both use it; neither
reaches through the other."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from functools import cached_property, lru_cache, partial
from typing import TYPE_CHECKING

from assistant.clock import Clock
from assistant.config import Settings
from assistant.events import KVReused, Stopped, TokenStreamed
from assistant.kv.reuse_policy import Repair, parse_repair
from assistant.llm.decoding import TokenSource, answer_steps
from assistant.llm.models import repair_for
from assistant.llm.prompt import (
    EVIDENCE_HEAD,
    Segments,
    build_segments,
    chat_frame,
    chunk_segment,
)
from assistant.llm.reuse import Node, Reused, moved_nodes, place, place_quotes, repair
from assistant.llm.runtime import LLMError, LocalLLM
from cache.kv_tree import KVTree, segment_hash
from cache.protocols import Embedder

if TYPE_CHECKING:  # handed in; precompute imports this module, not the reverse
    from assistant.precompute.activity import Activity

log = logging.getLogger(__name__)
CHUNK_TOKENS_KEPT = 4096  # chunks whose segment tokens are remembered

# Tokens per llama eval call: a background job checks between pieces whether a user is waiting,
# so it steps aside soon (bench/results/preemption.json: how long a user question waits). Logits
# do not depend on the piece size (checked in tests), so cached and uncached runs still agree
# token for token.
PIECE = 32

Check = Callable[[], None]


class Preempted(Exception):
    """A background job stepped aside for a user question; it goes back in the queue."""


class PromptCache:
    def __init__(
        self,
        settings: Settings,
        llm: LocalLLM,
        kv_tree: KVTree,
        system_prompt: str,
        embedder: Embedder,
        activity: Activity | None = None,
    ) -> None:
        self.settings = settings
        self.llm = llm
        self.kv = kv_tree
        self.system_prompt = system_prompt
        self.embedder = embedder
        self.activity = activity
        # when background work ends (epoch seconds; None: no end): a night run sets its
        # deadline here, so a job long at the 1.5B pace stops within a piece at it too
        self.stop_at: float | None = None
        self.cancelled: Callable[[], bool] | None = None  # the run's own stop (quit, `s`)
        # a chunk's segment tokens, remembered: the planner's check, the chunk_kv job and the
        # answers that use the chunk tokenise it once between them
        self._chunk_tokens = lru_cache(maxsize=CHUNK_TOKENS_KEPT)(self._tokenize_chunk)

    @cached_property
    def frame(self):
        """The model's chat template around the prompt (read when the model is first needed)."""
        return chat_frame(self.llm)

    @property
    def repair(self) -> str:
        """[cache] repair, "auto" read as the one measured for the writer's model file."""
        return repair_for(self.settings.cache.repair, str(getattr(self.llm, "path", "") or ""))

    def _tokenize_chunk(self, text: str) -> tuple[int, ...]:
        return tuple(chunk_segment(self.llm, text))

    def chunk_tokens(self, text: str) -> list[int]:
        return list(self._chunk_tokens(text))

    # -- the prompt ----------------------------------------------------------------------------

    def segments(
        self, chunks: Sequence[str], question: str, evidence: Sequence[str] = ()
    ) -> Segments:
        """The prompt's segments, chunks in the configured order: every path (answers,
        precompute's prefills, the KV checks) orders them here, so their KV paths match."""
        ordered = list(chunks)
        if self.settings.answer.chunk_order == "best-last":
            ordered.reverse()
        place_ = self.settings.answer.evidence_place
        evidence = () if place_ == "none" else evidence
        system = self.system_prompt
        tokens = [self.chunk_tokens(c) for c in ordered]
        return build_segments(self.llm, self.frame, system, tokens, question, evidence, place_)

    # -- answering -----------------------------------------------------------------------------

    def stream(
        self,
        question: str,
        segments: Segments,
        kv: bool,
        check: Check,
        clock: Clock,
        sentences: int | None = None,
        *,
        keep: bool = True,
        user: bool = False,
    ) -> Iterator[KVReused | TokenStreamed]:
        """Prefill `segments` (restoring KV when `kv`, and saving the new segments' KV as tree
        nodes unless `keep` is off), say how much was reused, then decode the answer token by
        token, up to `sentences` (else [answer] max_sentences) sentences. `user`: a question
        the user waits for, on every core other processes leave free (LocalLLM.for_the_user)."""
        with self.llm.for_the_user() if user else self.llm.lock:
            clock.lap("wait")  # for the model: a background job steps aside within a piece
            reused = self._prefill(segments, kv, clock, check, keep)
            yield KVReused(
                reused.tokens, segments.total, reused.mode, reused.repaired, reused.segments
            )
            tokens = self._answer_tokens(question)
            limit = self.settings.answer.max_sentences if sentences is None else sentences
            for text in self.decode(self.settings.answer.max_tokens, check, clock, tokens, limit):
                yield TokenStreamed(text)
            clock.lap("decode")

    def draft(
        self,
        question: str,
        segments: Segments,
        kv: bool,
        background: bool = True,
        sentences: int | None = None,
        *,
        keep: bool = True,
    ) -> str:
        """The whole answer `stream` decodes, as text (precompute's answers). `keep` off: the
        cached KV is read, nothing is added to the tree (a night's answer where the budget has
        no headroom must not evict the nodes the night planned)."""
        check = self.checker(background)
        events = self.stream(question, segments, kv, check, Clock(), sentences, keep=keep)
        return "".join(e.text for e in events if isinstance(e, TokenStreamed)).strip()

    def _answer_tokens(self, question: str) -> TokenSource:
        """The answer's decoder: greedy, or context-aware against the question alone."""
        answer = self.settings.answer
        if answer.decoding != "cad":
            return self.llm.greedy
        plain = self.segments([], question)
        tokens = plain.system + plain.question
        return lambda n, ban: self.llm.contrastive(n, tokens, answer.cad_alpha, ban)

    def decode(
        self,
        max_tokens: int,
        check: Check,
        clock: Clock | None = None,
        tokens_of: TokenSource | None = None,
        sentences: int = 0,
    ) -> Iterator[str]:
        """The answer's text as shown, up to `sentences` sentences (0: no limit): the loop and
        its stop rules run in llm/decoding.py (one call an answer); `check` runs after each
        token the answer goes on from."""
        answer = self.settings.answer
        guard = (answer.repeat_guard, answer.repeat_ngram)
        tokens_of = tokens_of or self.llm.greedy
        steps = answer_steps(tokens_of, self.llm.detokenize, guard, max_tokens, sentences)
        mark = clock.mark if clock is not None else None
        for step in steps:
            if mark is not None and step.token is not None:
                mark("ttft")  # the first token's time
                mark = None
            yield from step.texts
            if step.stop is None:
                check()

    # -- stepping aside for the user -----------------------------------------------------------

    def user_waiting(self) -> bool:
        """A user question is waiting for the model (background work steps aside)."""
        return self.activity is not None and self.activity.user_waiting()

    def steps_aside(self) -> bool:
        """Background work stops now: a user question is waiting, the run's end (`stop_at`)
        has come, or the run was stopped (`cancelled`: the app quits, the user pressed stop)."""
        if self.user_waiting() or (self.stop_at is not None and time.time() >= self.stop_at):
            return True
        return self.cancelled is not None and self.cancelled()

    def checker(self, background: bool, stop: Callable[[], bool] | None = None) -> Check:
        """What a run calls between pieces: it raises Stopped once `stop()` (the asker's: Esc,
        a new question, quitting) turns true, and a `background` one Preempted when it must
        step aside (`steps_aside`)."""

        def check() -> None:
            if stop is not None and stop():
                raise Stopped
            if background and self.steps_aside():
                raise Preempted

        return check

    def _eval(self, tokens: Sequence[int], check: Check) -> None:
        for start in range(0, len(tokens), PIECE):
            check()
            self.llm.eval(tokens[start : start + PIECE])

    # -- prefill with the KV tree --------------------------------------------------------------

    def _prefill(
        self, segments: Segments, kv: bool, clock: Clock, check: Check, keep: bool = True
    ) -> Reused:
        """Restore the longest cached prefix, evaluate the rest segment by segment (saving each new
        segment's KV as a tree node), then the question. With [cache] reuse = "any-order" a chunk
        with a [system, chunk] node is placed instead of evaluated."""
        any_order = kv and self.settings.cache.reuse == "any-order"
        policy = parse_repair(self.repair) if any_order else None
        reused = self._prefill_prefix(segments, kv, check, policy, keep)
        clock.lap("kv_load")
        if reused.placed and policy is not None and policy.quotes:
            # the prompt is approximate already: quote the evidence
            reused = self._quote_evidence(segments, reused, check, policy)
        else:
            self._eval(segments.evidence, check)
        self._eval(segments.question, check)
        clock.lap("prefill")
        return reused

    def _quote_evidence(
        self, segments: Segments, reused: Reused, check: Check, policy: Repair
    ) -> Reused:
        """Any-order, with chunks placed: the evidence segment's runs quoted from a prompt chunk
        take their KV from that chunk's node (llm/reuse.py); the rest is computed. Repaired as
        placed chunks are. A prompt whose chunks all came exactly stays exact."""
        system = segment_hash(segments.system)
        sources = [*segments.chunks, self.chunk_tokens(EVIDENCE_HEAD)]

        def node_of(c: int) -> tuple[bytes, int] | None:
            return self.kv.node_blob([system, segment_hash(sources[c])])

        evaluate = partial(self._eval, check=check)
        placed = place_quotes(self.llm, segments.evidence, sources, node_of, evaluate)
        n = sum(length for _, length in placed)
        repaired = repair(self.llm, policy, placed, check)
        return replace(
            reused,
            tokens=reused.tokens + n,
            placed=reused.placed + n,
            repaired=reused.repaired + repaired,
        )

    def keep_heading(self, background: bool = True) -> None:
        """Precompute: the [system, evidence heading] node, once. Under any-order reuse it lends
        its KV to every evidence segment's heading, as a chunk's node lends a quoted line."""
        if self.settings.answer.evidence_sentences > 0:
            self.prefill([EVIDENCE_HEAD], background, missing_only=True)

    def _prefill_prefix(
        self,
        segments: Segments,
        kv: bool,
        check: Check,
        policy: Repair | None = None,
        keep: bool = True,
    ) -> Reused:
        """`policy`: any-order reuse with that repair (None: exact, nothing placed). `keep`
        off: nothing computed here is stored as a node."""
        hashes = [segment_hash(s) for s in segments.prefix]
        start = self._restore(segments, hashes) if kv else 0
        if not start:
            self.llm.reset()
        placed: list[tuple[int, int]] = []  # (position, length) of chunks placed any-order
        nodes = self._nodes(segments, hashes, start, policy) if policy is not None else {}
        for depth in range(start, len(segments.prefix)):
            first, tokens = self.llm.n_past, segments.prefix[depth]
            if place(self.llm, nodes.get(depth), tokens):
                placed.append((first, len(tokens)))
                continue
            self._eval(tokens, check)
            if kv and keep and not placed:  # a node holds only KV an uncached run computes
                blob = self.llm.save_range(first, self.llm.n_past)
                self.kv.store(hashes[: depth + 1], self.llm.n_past, blob)
        restored = sum(len(s) for s in segments.prefix[:start])
        n_placed = sum(n for _, n in placed)
        repaired = repair(self.llm, policy, placed, check) if policy is not None else 0
        return Reused(restored + n_placed, n_placed, repaired, start + len(placed))

    def _nodes(
        self, segments: Segments, hashes: list[str], start: int, policy: Repair
    ) -> dict[int, Node]:
        """Any-order: the [system, chunk] nodes of the prompt's chunks after the first (from
        depth `start` on), their KV moved beforehand to where each chunk stands in this prompt
        (llm/mover.py) unless the policy quotes the evidence from them: the prompt's context
        then moves the quoted runs anyway, and the chunks with them in the same pass."""
        wanted, at = {}, sum(len(s) for s in segments.prefix[:start])
        for depth in range(start, len(segments.prefix)):
            if depth > 1:
                node = self.kv.node_blob([hashes[0], hashes[depth]])
                wanted[depth] = (node, len(segments.prefix[depth]), at)
            at += len(segments.prefix[depth])
        nodes = list(wanted.values())
        moved = [node for node, _, _ in nodes] if policy.quotes else moved_nodes(self.llm, nodes)
        return {d: node for d, node in zip(wanted, moved, strict=True) if node is not None}

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

    # -- background work (the idle scheduler's jobs) -------------------------------------------

    def prefill(
        self, chunks: Sequence[str], background: bool = True, *, missing_only: bool = False
    ) -> tuple[int, int]:
        """Strategy 1: put the KV of [system, chunks…] in the tree, no question, no decoding.
        With `missing_only`, a prefix the tree holds whole is left as it is (not restored):
        the chunks are tokenised once for the check and the prefill.
        Returns (tokens reused, prefix tokens)."""
        segments = self.segments(chunks, "")
        total = sum(len(s) for s in segments.prefix)
        if missing_only and self._cached(segments):
            return total, total
        with self.llm.lock:
            reused = self._prefill_prefix(segments, True, self.checker(background))
        return reused.tokens, total

    def kv_cached(self, chunks: Sequence[str]) -> bool:
        """The whole [system, chunks…] prefix is in the KV tree."""
        return self._cached(self.segments(chunks, ""))

    def _cached(self, segments: Segments) -> bool:
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
        check = self.checker(background)
        segments = self.segments([chunk], "")
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
        check = self.checker(background)
        with self.llm.lock:
            self.llm.reset()
            tokens = self.llm.tokenize(text, first=True)
            self._eval(tokens, check)
            return self._continue_line(None, max_tokens, check, stop="\n\n")

    def _continue_line(self, tokens, max_tokens: int, check: Check, stop: str = "\n") -> str:
        if tokens:
            self._eval(tokens, check)
        text = ""
        for piece in self.decode(max_tokens, check):
            text += piece
            if stop in text:
                break
        return text.split(stop, 1)[0]
