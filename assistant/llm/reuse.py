"""Which KV a prompt reuses, and how a chunk's KV placed out of its place is repaired.

"exact" restores only the longest cached run of segments from the system prompt: the prompt's
KV is then what an uncached run computes, token for token. "any-order" also places the KV of
each later chunk that has a [system, chunk] node, computed after the system prompt alone and
moved to where the chunk now stands: all of a prompt's chunks together in a small side context
(`moved_nodes`, llm/mover.py), then placed (`LocalLLM.append_range`). Its tokens never attended
to the chunks before them; a repair policy re-decodes some of them in place:

- "none": nothing;
- "sink-N": the first N tokens of every chunk placed so (EPIC, 2024: a chunk computed alone
  puts the attention mass of its first tokens on what preceded it when computed; re-decoding
  them over the real context recovers most of the lost cross-chunk attention);
- "blend-R": R% of each placed chunk's tokens, in runs of RUN spread evenly over it — a cheap
  proxy for CacheBlend's choice of the tokens whose KV deviates most, which needs one layer's KV
  of every token and is not reachable through llama.cpp's API. Evenly spaced runs give every
  later token repaired tokens within about RUN·100/R positions; runs, not single tokens, since
  llama.cpp decodes only consecutive positions in one batch and each batch costs a pass;
- "evidence": no chunk token, but the evidence segment is computed over the placed chunks
  instead of quoted from them (below): the lines the answer is read from, right before the
  question, then attend to every chunk as in an exact prompt.

Otherwise, under "any-order" the evidence segment is quoted from the prompt's chunks: its runs
of tokens that are a chunk's own tokens (`quoted_runs`) take that chunk's KV too
(`place_quotes`), and only the rest (the dashes, a word tokenised otherwise than in its chunk)
is computed: every run is placed first and the gaps computed after, since llama.cpp re-rotates
moved keys in a pass over the whole cache (its size is n_ctx, not the moved cells) at the next
decode: once however many runs moved. The prompt's tokens stay what they are in every mode; only
where their KV comes from differs. The modes and policies themselves are plain values in
assistant/kv/reuse_policy.py, which the settings validate without importing the runtime.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from assistant.llm.mover import Blob, Move
from assistant.llm.runtime import LLMError, LocalLLM

if TYPE_CHECKING:  # a type only: llm does not import kv (kv → llm)
    from assistant.kv.reuse_policy import Repair

log = logging.getLogger(__name__)

MIN_QUOTE = 6  # a run shorter than this is computed: a part costs a restore of its whole chunk
RUN = 8  # blend repairs runs of this many consecutive tokens


@dataclass(frozen=True)
class Quote:
    """Tokens [start, start + length) of the evidence segment are tokens [at, at + length) of
    the prompt chunk `chunk` (its index in the prompt)."""

    start: int
    length: int
    chunk: int
    at: int


def quoted_runs(
    tokens: Sequence[int], chunks: Sequence[Sequence[int]], least: int = MIN_QUOTE
) -> list[Quote]:
    """The runs of `tokens` found verbatim in one of `chunks`, longest first from the left, at
    least `least` tokens each, not overlapping."""
    where: dict[int, list[tuple[int, int]]] = {}
    for c, chunk in enumerate(chunks):
        for i, token in enumerate(chunk):
            where.setdefault(token, []).append((c, i))
    runs, i = [], 0
    while i < len(tokens):
        best = max(
            ((_run(tokens, i, chunks[c], at), c, at) for c, at in where.get(tokens[i], ())),
            default=(0, 0, 0),
        )
        if best[0] >= least:
            runs.append(Quote(i, best[0], best[1], best[2]))
            i += best[0]
        else:
            i += 1
    return runs


def place_quotes(
    llm: LocalLLM,
    tokens: Sequence[int],
    chunks: Sequence[Sequence[int]],
    node_of: Callable[[int], tuple[bytes, int] | None],
    evaluate: Callable[[Sequence[int]], None],
) -> list[tuple[int, int]]:
    """Append `tokens` (the evidence segment) to the prompt: each run quoted from chunk c with
    a node (`node_of(c)`, read only for the chunks a run is quoted from, once each) placed from
    that node, all of them first, then the gaps between them computed in order
    (`LocalLLM.fill`): a K-shift costs a pass over the whole cache, so the placed KV is
    re-rotated once, not once a gap. Without a run placed (or when the gaps cannot be
    filled), `evaluate` computes them all. Returns the placed runs as (position, length), as
    `repair` takes them."""
    base = llm.n_past
    placed: list[tuple[int, int]] = []
    covered: list[tuple[int, int]] = []
    nodes: dict[int, tuple[bytes, int] | None] = {}
    for quote in quoted_runs(tokens, chunks):
        part = (quote.at, quote.at + quote.length)
        if quote.chunk not in nodes:
            nodes[quote.chunk] = node_of(quote.chunk)
        if place(llm, nodes[quote.chunk], chunks[quote.chunk], part, at=base + quote.start):
            placed.append((base + quote.start, quote.length))
            covered.append((quote.start, quote.start + quote.length))
    if placed:
        try:
            llm.fill(tokens, gaps(len(tokens), covered))
            return placed
        except LLMError as exc:
            log.warning("quoted KV not used (%s); the evidence is computed", exc)
            llm.truncate(base)
    evaluate(tokens)
    return []


def gaps(n: int, covered: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The runs of [0, n) outside the `covered` runs (apart and in order)."""
    out, done = [], 0
    for a, b in covered:
        if a > done:
            out.append((done, a))
        done = b
    if done < n:
        out.append((done, n))
    return out


def _run(tokens: Sequence[int], i: int, chunk: Sequence[int], at: int) -> int:
    n = 0
    while i + n < len(tokens) and at + n < len(chunk) and tokens[i + n] == chunk[at + n]:
        n += 1
    return n


@dataclass(frozen=True)
class Reused:
    """What a prompt's prefill took from the cache."""

    tokens: int  # prompt tokens whose KV was restored or placed, not computed
    placed: int = 0  # of them, in chunks placed out of their cached place (any-order)
    repaired: int = 0  # placed tokens re-decoded by the repair policy
    segments: int = 0  # prompt segments (the system prompt, chunks) whose KV was reused

    @property
    def mode(self) -> str:
        return "any-order" if self.placed else "exact"


Node = tuple[Blob, int]  # a [system, chunk] node: its blob and the position after the chunk


def place(
    llm: LocalLLM,
    node: Node | None,
    tokens: Sequence[int],
    part: tuple[int, int] | None = None,
    at: int | None = None,
) -> bool:
    """Append a chunk's KV (or only its tokens `part`) from its [system, chunk] node (blob,
    position after the chunk) at the end of the prompt, or at position `at` beyond it
    (`LocalLLM.place_range`: n_past stays); False (nothing changed) when there is none, or it
    cannot be used here: the caller computes those tokens instead."""
    if node is None:
        return False
    blob, end = node
    try:
        if at is None:
            llm.append_range(blob, tokens, end - len(tokens), part)
        else:
            llm.place_range(blob, tokens, end - len(tokens), part or (0, len(tokens)), at)
    except LLMError as exc:
        log.info("chunk KV not placed (%s); it is computed", exc)
        return False
    return True


def moved_nodes(llm: LocalLLM, wanted: Sequence[tuple[Node | None, int, int]]) -> list[Node | None]:
    """For each (node, chunk tokens, position `at` the chunk takes in the prompt): the node with
    its KV moved to `at`, all in one re-rotation pass of a small side context (llm/mover.py),
    or the node as it was where it is not moved so (`place` then moves it in the prompt)."""
    todo = [(i, node, n, at) for i, (node, n, at) in enumerate(wanted) if node is not None]
    blobs = llm.moved([Move(node[0], node[1] - n, n, at) for _, node, n, at in todo])
    out = [node for node, _, _ in wanted]
    for (i, _, n, at), blob in zip(todo, blobs, strict=True):
        if blob is not None:
            out[i] = (blob, at + n)
    return out


def repair(
    llm: LocalLLM, policy: Repair, placed: Sequence[tuple[int, int]], check: Callable[[], None]
) -> int:
    """Re-decode the policy's tokens of the chunks `placed` at (start, length); how many."""
    spans = repair_spans(policy, placed)
    for start, end in spans:
        check()
        llm.redecode(start, end)
    return sum(end - start for start, end in spans)


def repair_spans(policy: Repair, placed: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The [start, end) position runs `policy` re-decodes, for chunks placed at (start, length)."""
    if policy.kind == "sink":
        return [(s, s + min(policy.amount, n)) for s, n in placed if policy.amount > 0]
    if policy.kind == "blend":
        return [run for s, n in placed for run in _spread(s, n, policy.amount)]
    return []


def _spread(start: int, length: int, percent: int) -> list[tuple[int, int]]:
    """About `percent` of the positions [start, start + length) in evenly spaced runs of RUN
    (the first run at the chunk's start)."""
    wanted = round(length * percent / 100)
    if wanted <= 0:
        return []
    if wanted >= length - RUN:
        return [(start, start + length)]
    runs = -(-wanted // RUN)
    step = length / runs
    return [
        (start + int(i * step), min(start + int(i * step) + RUN, start + length))
        for i in range(runs)
    ]
