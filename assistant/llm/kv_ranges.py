"""The KV of a prompt's ranges (a part of LocalLLM): saved, restored, placed at other positions,
filled in around, and computed again in place.

KV is saved per segment: the positions of one segment are copied into a scratch sequence (1) and
only that sequence is saved; a path is restored by loading each segment's blob into the scratch
sequence and copying it into the prompt's sequence (0). Against saving the whole prefix at every
node this stores less at the same restore time (bench/studies/kv_design.py). It needs two
sequences in a unified KV cache, which llama_cpp.Llama sets up only for embeddings, so the
context is replaced by one built in llm/model_file.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from assistant.llm.model_file import LLMError
from assistant.llm.mover import Blob, Move, SideMover, holds, load_seq, save_seq

if TYPE_CHECKING:
    from llama_cpp import Llama


class KVRanges:
    """Mixed into LocalLLM: uses its loaded model (`_llm`), `name`, `move_aside`, the side mover
    made when it loads, n_past, reset(), _check_room() and _decode_rows()."""

    _llm: Llama
    _mover: SideMover
    name: str
    move_aside: bool

    def save_range(self, start: int, end: int) -> bytes:
        """The KV of positions [start, end) of the prompt alone (via the scratch sequence)."""
        from llama_cpp import llama_cpp as C

        ctx = self._llm._ctx.ctx
        memory = C.llama_get_memory(ctx)
        C.llama_memory_seq_cp(memory, 0, 1, start, end)
        try:
            return bytes(save_seq(ctx, 1))
        finally:
            C.llama_memory_seq_rm(memory, 1, -1, -1)

    def restore_ranges(self, blobs: Sequence[Blob], tokens: Sequence[int]) -> None:
        """Make the context hold exactly `tokens`, from the blobs of its segments in order."""
        from llama_cpp import llama_cpp as C

        self.reset()
        ctx = self._llm._ctx.ctx
        memory = C.llama_get_memory(ctx)
        for blob in blobs:
            loaded = load_seq(ctx, blob, 1)
            C.llama_memory_seq_cp(memory, 1, 0, -1, -1)
            C.llama_memory_seq_rm(memory, 1, -1, -1)
            if loaded != len(blob):
                self.reset()
                raise LLMError("a cached KV state does not fit this model; it is recomputed")
        if C.llama_memory_seq_pos_max(memory, 0) != len(tokens) - 1:
            self.reset()
            raise LLMError("cached KV segments do not add up to the prompt; it is recomputed")
        self._llm.input_ids[: len(tokens)] = tokens
        self._llm.n_tokens = len(tokens)

    @property
    def can_shift(self) -> bool:
        """The context can move cached KV to other positions (re-rotating RoPE keys)."""
        from llama_cpp import llama_cpp as C

        return bool(C.llama_memory_can_shift(C.llama_get_memory(self._llm._ctx.ctx)))

    def moved(self, moves: Sequence[Move]) -> list[Blob | None]:
        """Each move's blob with its KV already at `to` (keys re-rotated, llm/mover.py), so that
        placing it moves nothing in the prompt's context; None where it is not moved so."""
        if not (self.move_aside and self.can_shift):
            return [None] * len(moves)
        return self._mover.moved(moves)

    def append_range(
        self,
        blob: Blob,
        tokens: Sequence[int],
        saved_at: int,
        part: tuple[int, int] | None = None,
    ) -> None:
        """Put a segment's KV, saved (`save_range`) at positions [saved_at, saved_at + n), after
        the current state: moved to n_past, its keys re-rotated, when that differs. With other
        tokens before it than when saved, its KV is an approximation (`redecode` repairs it).
        `part` = (a, b): only the KV of the segment's tokens [a, b) (`tokens` is the whole
        segment's), as when a line quoted from a chunk follows it."""
        a, b = part or (0, len(tokens))
        self.place_range(blob, tokens, saved_at, (a, b), self.n_past)
        n = self._llm.n_tokens
        self._llm.input_ids[n : n + b - a] = tokens[a:b]
        self._llm.n_tokens = n + b - a

    def place_range(
        self, blob: Blob, tokens: Sequence[int], saved_at: int, part: tuple[int, int], at: int
    ) -> None:
        """The KV of a saved segment's tokens [a, b) (`part`) put at positions [at, at + b - a)
        of the prompt, beyond n_past, which does not move: the positions between stay empty
        until `fill` computes them. The keys are re-rotated when applied, once for every part
        moved since the last decode (llama.cpp's K-shift passes over the whole cache, however
        few tokens moved: place every part before computing anything, `fill`)."""
        from llama_cpp import llama_cpp as C

        a, b = part
        if not 0 <= a < b <= len(tokens):
            raise ValueError(f"part [{a}, {b}) outside a segment of {len(tokens)} tokens")
        if at < self.n_past:
            raise ValueError(f"position {at} is before the prompt's end, {self.n_past}")
        delta = at - (saved_at + a)
        if delta and not self.can_shift:
            raise LLMError(f"{self.name}: its KV cannot be moved; the segment is recomputed")
        self._check_room(b - a, at)
        memory = C.llama_get_memory(self._llm._ctx.ctx)
        try:
            self._load_scratch(blob, saved_at, len(tokens))
            C.llama_memory_seq_rm(memory, 1, saved_at + b, -1)
            C.llama_memory_seq_rm(memory, 1, saved_at, saved_at + a)
            if delta:
                C.llama_memory_seq_add(memory, 1, -1, -1, delta)
            C.llama_memory_seq_cp(memory, 1, 0, -1, -1)
        finally:
            C.llama_memory_seq_rm(memory, 1, -1, -1)

    def fill(self, tokens: Sequence[int], gaps: Sequence[tuple[int, int]]) -> None:
        """The prompt goes on with `tokens` from n_past: their KV was placed (`place_range`) but
        for the `gaps` (token index runs [a, b), apart and in order), computed now in order,
        each over everything before it, as if the tokens had been appended one run at a time;
        only the placed KV's re-rotation is paid once, at the first gap, not once a run.
        llama.cpp decodes a sequence only at its end, so a gap before placed KV is decoded in
        the scratch sequence over a copy of the prompt before it, then moved in."""
        from llama_cpp import llama_cpp as C

        base, memory = self.n_past, C.llama_get_memory(self._llm._ctx.ctx)
        self._check_room(len(tokens))
        for a, b in gaps:
            self._decode_after(tokens[a:b], base + a)
        if C.llama_memory_seq_pos_max(memory, 0) != base + len(tokens) - 1:
            raise LLMError("placed KV and computed gaps do not add up to the prompt")
        self._llm.input_ids[base : base + len(tokens)] = tokens
        self._llm.n_tokens = base + len(tokens)

    def _load_scratch(self, blob: Blob, first: int, n_tokens: int) -> None:
        """Load `blob` into the scratch sequence; it must hold positions [first, first + n)."""

        if not holds(self._llm._ctx.ctx, blob, 1, first, n_tokens):
            raise LLMError("a cached KV state does not fit this segment; it is recomputed")

    def redecode(self, start: int, end: int) -> None:
        """Compute positions [start, end) of the prompt again, in place, attending to the KV
        before them as it is now (the tokens after them are kept as they were). llama.cpp
        accepts a batch only at the end of a sequence, so the tokens are decoded in the scratch
        sequence over a copy of [0, start) and moved back."""
        if not 0 < start < end <= self.n_past:
            raise ValueError(f"redecode [{start}, {end}) outside 1..{self.n_past}")
        self._llm._ctx.kv_cache_seq_rm(0, start, end)
        self._decode_after([int(t) for t in self._llm.input_ids[start:end]], start)

    def _decode_after(self, tokens: Sequence[int], start: int) -> None:
        """Decode `tokens` at positions start, start + 1, … of the prompt over its KV before
        `start` alone, whatever it holds after them (positions left empty for them): in the
        scratch sequence over a copy of [0, start), then moved into the prompt's."""
        from llama_cpp import llama_cpp as C
        from llama_cpp._internals import LlamaBatch

        memory = C.llama_get_memory(self._llm._ctx.ctx)
        batch = LlamaBatch(n_tokens=len(tokens), embd=0, n_seq_max=1, verbose=False)
        try:
            C.llama_memory_seq_cp(memory, 0, 1, 0, start)
            self._decode_rows(batch, [(t, 1, start + i) for i, t in enumerate(tokens)])
            C.llama_memory_seq_cp(memory, 1, 0, start, start + len(tokens))
        finally:
            C.llama_memory_seq_rm(memory, 1, -1, -1)
            batch.close()
