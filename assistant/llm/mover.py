"""Moving saved KV to other positions in a small side context.

llama.cpp moves a sequence's cells with `llama_memory_seq_add` and re-rotates their RoPE keys at
the context's next decode, in one pass over *every* cell of the context, moved or not: in the
prompt's context (n_ctx 4096) that pass costs SmolLM2 about as much as computing 15 prompt
tokens on 2 cores, whether one chunk moved or three. A side context of a few hundred cells does
the same re-rotation in a pass over those cells alone: the blobs are loaded there and moved,
and the moved blobs are read back, their keys rotated by the same ggml operation with the same
rope parameters (the side context is built from a copy of the prompt context's parameters).

llama.cpp has no call that applies a move alone: a decode applies pending moves, then looks for
cells for its batch. The side context is given a batch one token larger than its free cells, so
the decode applies the move and returns 1 ("no KV slot for the batch") without computing
anything: the move costs the re-rotation pass alone, not a pass over the model's weights.

The prompt's context then moves nothing: its own pass re-rotates the unmoved cells too, by 0,
which for gemma-3 is not exactly the identity (it changes a few hundred bytes of a 100-token
prompt's KV); moved here, the system prompt's and the first chunk's KV stay as computed.

Whether the side context moves KV exactly as the prompt's context would (and whether a decode
that finds no room still applies the move) is checked once, when it is built: one short segment
is moved both ways and the two results compared byte for byte (a model whose rope depends on the
context's size, as LongRoPE's factors do, would differ). Where they differ, or the side context
cannot be built, nothing is moved here and the prompt's context moves the KV itself, as before.
The side context holds 512 cells of KV, built at the first answer that moves a chunk (the check
included; bench/results/reuse_demo_moved.json times answers with it).
"""

from __future__ import annotations

import ctypes
import logging
import threading
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from assistant.llm.model_file import interrupt_after

log = logging.getLogger(__name__)

CELLS = 512  # the side context's cells: its re-rotation pass covers them all
SEQS = 4  # sequence 0 holds the batch that applies the move; 1.. the blobs moved
PROBE_SHIFT = 37  # how far the build check moves its segment
Blob = bytes | bytearray  # a sequence's saved KV: read from the cache, or moved here
NO_ROOM = b"failed to find a memory slot"  # what llama.cpp logs (as an error) when it finds none
_expecting = threading.local()  # .no_room: this thread's decode is meant to find no room
_relay = None  # the log callback installed (kept alive: llama.cpp holds a pointer to it)


@dataclass(frozen=True)
class Move:
    """A blob saved (`LocalLLM.save_range`) with `n_tokens` cells at positions [first, …),
    to be put at [to, …)."""

    blob: Blob
    first: int
    n_tokens: int
    to: int


class SideMover:
    """Moves blobs in a side context of `CELLS` cells over the prompt context's model."""

    def __init__(self, llama) -> None:
        """`llama`: the llama_cpp.Llama whose context (`_ctx`) and model the blobs belong to."""
        self._llama = llama
        self._ctx = None
        self.state = "unbuilt"  # "unbuilt" | "on" | "off"

    def moved(self, moves: Sequence[Move]) -> list[Blob | None]:
        """Each move's blob with its cells at `to` and its keys re-rotated; None for a move
        left to the caller (nothing to move, more cells than the side context holds, a blob
        that does not load, or no usable side context)."""
        out: list[Blob | None] = [None] * len(moves)
        todo = [i for i, m in enumerate(moves) if m.to != m.first and 0 < m.n_tokens < CELLS]
        if not todo or not self._ready():
            return out
        for group in _groups(todo, moves):
            for i, blob in zip(group, self._move([moves[i] for i in group]), strict=True):
                out[i] = blob
        return out

    # -- the side context ---------------------------------------------------------------------

    def _ready(self) -> bool:
        if self.state == "unbuilt":
            self.state = "on" if self._build() else "off"
        return self.state == "on"

    def _build(self) -> bool:
        from llama_cpp._internals import LlamaContext

        try:
            with interrupt_after():
                self._ctx = LlamaContext(
                    model=self._llama._model, params=self._params(), verbose=False
                )
        except ValueError as exc:
            log.info("no side context to move KV in (%s); the prompt's context moves it", exc)
            return False
        if self._agrees():
            return True
        log.info("the side context moves KV otherwise than the prompt's; the prompt's moves it")
        self._ctx.close()
        self._ctx = None
        return False

    def _params(self):
        """The prompt context's parameters (rope, KV types, threads …) but for its size."""
        from llama_cpp import llama_cpp as C

        params = C.llama_context_params.from_buffer_copy(self._llama._ctx.params)
        params.n_ctx, params.n_seq_max, params.kv_unified = CELLS, SEQS, True
        params.n_batch, params.n_ubatch = CELLS, 8  # a batch as large as the cells; no compute
        return params

    def _agrees(self) -> bool:
        """A short segment moved here and in the prompt's context (its scratch sequence 1) comes
        out byte for byte the same."""
        from llama_cpp import llama_cpp as C

        main = self._llama._ctx
        memory = C.llama_get_memory(main.ctx)
        tokens = self._llama.tokenize(b" the keys move with the text", add_bos=False)[:8]
        n = len(tokens)
        C.llama_memory_seq_rm(memory, 1, -1, -1)
        try:
            if _decode(main, [(t, 1, p) for p, t in enumerate(tokens)]) != 0:
                return False
            blob = save_seq(main.ctx, 1)
        finally:
            C.llama_memory_seq_rm(memory, 1, -1, -1)
        theirs = moved_in(main, blob, PROBE_SHIFT, n)
        ours = self._move([Move(blob, 0, n, PROBE_SHIFT)])[0]
        return theirs is not None and ours == theirs

    def _move(self, group: Sequence[Move]) -> list[bytearray | None]:
        """Move the blobs of `group` in sequences 1.. of the side context, applied by one decode
        that finds no room for its batch, and read them back."""
        from llama_cpp import llama_cpp as C

        ctx = self._ctx
        memory = C.llama_get_memory(ctx.ctx)
        C.llama_memory_clear(memory, False)
        loaded, used = [], 0
        for seq, m in enumerate(group, start=1):
            if holds(ctx.ctx, m.blob, seq, m.first, m.n_tokens):
                C.llama_memory_seq_add(memory, seq, -1, -1, m.to - m.first)
                loaded.append(seq)
                used += m.n_tokens
            else:
                C.llama_memory_seq_rm(memory, seq, -1, -1)
        out: list[bytearray | None] = [None] * len(group)
        try:
            if loaded and _no_room(ctx, CELLS - used + 1) in (0, 1):
                for seq in loaded:
                    out[seq - 1] = save_seq(ctx.ctx, seq, len(group[seq - 1].blob))
        finally:
            C.llama_memory_clear(memory, False)
        return out


def moved_in(ctx, blob: Blob, delta: int, end: int) -> bytearray | None:
    """`blob` (its cells before position `end`) moved by `delta` in `ctx`'s own scratch
    sequence 1, as the prompt's context moves placed KV, and read back; None where it does not
    load or the decode that applies the move fails."""
    from llama_cpp import llama_cpp as C

    memory = C.llama_get_memory(ctx.ctx)
    C.llama_memory_seq_rm(memory, 1, -1, -1)
    try:
        if load_seq(ctx.ctx, blob, 1) != len(blob):
            return None
        C.llama_memory_seq_add(memory, 1, -1, -1, delta)
        if _decode(ctx, [(0, 1, end + delta)]) != 0:  # applies the move
            return None
        C.llama_memory_seq_rm(memory, 1, end + delta, -1)
        return save_seq(ctx.ctx, 1)
    finally:
        C.llama_memory_seq_rm(memory, 1, -1, -1)


def _groups(todo: Sequence[int], moves: Sequence[Move]) -> list[list[int]]:
    """`todo` in runs that fit the side context together, one cell kept for the decode."""
    groups: list[list[int]] = []
    cells = CELLS
    for i in todo:
        n = moves[i].n_tokens
        if groups and len(groups[-1]) < SEQS - 1 and cells + n < CELLS:
            groups[-1].append(i)
            cells += n
        else:
            groups.append([i])
            cells = n
    return groups


def holds(ctx, blob: Blob, seq: int, first: int, n_tokens: int) -> bool:
    """Load `blob` into sequence `seq`: whether it loaded whole and holds exactly the positions
    [first, first + n_tokens)."""
    from llama_cpp import llama_cpp as C

    memory = C.llama_get_memory(ctx)
    loaded = load_seq(ctx, blob, seq)
    span = (C.llama_memory_seq_pos_min(memory, seq), C.llama_memory_seq_pos_max(memory, seq))
    return loaded == len(blob) and span == (first, first + n_tokens - 1)


def load_seq(ctx, blob: Blob, seq: int) -> int:
    """Load `blob` into sequence `seq`; how many bytes were read (0: it does not fit)."""
    from llama_cpp import llama_cpp as C

    return C.llama_state_seq_set_data(ctx, pointer(blob), len(blob), seq)


def pointer(blob: Blob):
    """A uint8 pointer to the blob's own bytes, not a copy (5.7 MB a SmolLM2 chunk)."""
    if isinstance(blob, bytes):
        return ctypes.cast(ctypes.c_char_p(blob), ctypes.POINTER(ctypes.c_uint8))
    return (ctypes.c_uint8 * len(blob)).from_buffer(blob)


def save_seq(ctx, seq: int, size: int = 0) -> bytearray:
    """Sequence `seq`'s KV, read into `size` bytes when that is enough (a blob moved here is
    as long as it was), else into as many as llama.cpp says it needs."""
    from llama_cpp import llama_cpp as C

    out = bytearray(size)
    written = C.llama_state_seq_get_data(ctx, pointer(out), size, seq) if size else 0
    if not written:
        out = bytearray(C.llama_state_seq_get_size(ctx, seq))
        written = C.llama_state_seq_get_data(ctx, pointer(out), len(out), seq)
    del out[written:]
    return out


def _no_room(ctx, n_tokens: int) -> int:
    """Decode a batch of `n_tokens` (token 0, sequence 0) that cannot fit: llama.cpp applies
    the pending moves, finds no cells for the batch and returns 1 without computing it (its
    "no memory slot" error is kept out of the log)."""
    _quiet_no_room()
    _expecting.no_room = True
    try:
        with interrupt_after():  # the error it logs calls back into Python
            return _decode(ctx, [(0, 0, p) for p in range(n_tokens)])
    finally:
        _expecting.no_room = False


def _quiet_no_room() -> None:
    """Relay llama.cpp's log to llama-cpp-python's handler as before, but for the "no memory
    slot" error of a decode meant to find none."""
    global _relay
    if _relay is not None:
        return
    import llama_cpp
    from llama_cpp import _logger

    @llama_cpp.llama_log_callback
    def relay(level: int, text: bytes, user_data) -> None:
        if not (getattr(_expecting, "no_room", False) and NO_ROOM in text):
            _logger.llama_log_callback(level, text, user_data)

    llama_cpp.llama_log_set(relay, ctypes.c_void_p(0))
    _relay = relay


def _decode(ctx, rows: Sequence[tuple[int, int, int]]) -> int:
    """Decode (token, sequence, position) rows in one batch, no logits kept; llama_decode's
    return code (1: no room for the batch, after the pending moves were applied)."""
    from llama_cpp import llama_cpp as C
    from llama_cpp._internals import LlamaBatch

    batch = LlamaBatch(n_tokens=len(rows), embd=0, n_seq_max=1, verbose=False)
    try:
        fill_batch(batch, rows)
        return C.llama_decode(ctx.ctx, batch.batch)
    finally:
        batch.close()


def fill_batch(batch, rows: Sequence[tuple[int, int, int]], outputs: Collection[int] = ()) -> None:
    """Put (token, sequence, position) rows in a llama_cpp LlamaBatch; logits for the rows
    numbered in `outputs` alone."""
    b = batch.batch
    b.n_tokens = len(rows)
    for i, (token, seq, pos) in enumerate(rows):
        b.token[i], b.pos[i], b.n_seq_id[i], b.logits[i] = token, pos, 1, i in outputs
        b.seq_id[i][0] = seq
