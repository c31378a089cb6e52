"""Which layer a predicted question fills, and when entries move between the layers
(PerCache §4.3.2).

A predicted question can be paid for in two ways: strategy 1 prefills its prompt (the KV tree gets
the chunk prefix, the QA bank a *pending* entry); strategy 2 also decodes the answer (an answered
QA entry). A decoded answer only pays off when a later question is similar enough to hit it, and
how often that happens is set by τ: with a strict τ few real questions come close enough to a
predicted one, so decoding is mostly wasted and the budget goes further as prefills; with a loose
τ, decoding pays. The choice is made from τ against a cutoff, not from past hit rates, so it
holds from the first run, before there is any history to measure.

Conversions follow the same rule as τ or the budget change:
- KV → QA: once τ is below the cutoff, pending entries are decoded (their prefix is in the tree).
- QA → KV: an answered entry whose chunk prefix was evicted from the tree is prefilled again when
  the KV budget has room, most-hit entries first (they are the likeliest to be asked again).

Which chunks get a [system, chunk] node while the budget has room (`[precompute] plan`):
"newest" takes the newest chunks first; "access" first takes the chunks the user's questions
and the predicted ones were answered from, most used first: a user asks about a few threads
again and again, so the chunks past questions retrieved are the likeliest in the next prompt.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum


class Strategy(IntEnum):
    PREFILL = 1  # KV tree + pending QA entry
    PREFILL_DECODE = 2  # KV tree + answered QA entry


def choose_strategy(threshold: float, cutoff: float) -> Strategy:
    """Strategy 1 when τ is at or above the cutoff (QA hits will be rare), else strategy 2."""
    return Strategy.PREFILL if threshold >= cutoff else Strategy.PREFILL_DECODE


def decode_pending(threshold: float, cutoff: float) -> bool:
    """KV → QA conversion is due: τ has fallen below the cutoff."""
    return choose_strategy(threshold, cutoff) is Strategy.PREFILL_DECODE


@dataclass(frozen=True)
class RebuildCandidate:
    entry_id: int
    hits: int
    last_used: float


def kv_room(used_bytes: int, budget_bytes: int, headroom: float = 0.9) -> int:
    """Bytes the KV tree may still grow by before eviction would start (keeping `headroom`
    of the budget as the ceiling, so a rebuild does not evict what the user just made)."""
    return max(0, int(budget_bytes * headroom) - used_bytes)


def node_bytes(used_bytes: int, nodes_with_kv: int) -> int:
    """The mean KV blob of a tree node (5 MiB until there is one to measure)."""
    return used_bytes // max(1, nodes_with_kv) or 5 * 2**20


def pick_rebuilds(
    candidates: Sequence[RebuildCandidate], room_bytes: int, bytes_per_entry: int
) -> list[int]:
    """QA → KV conversion: the entries to prefill again, most hit (then most recent) first, as
    many as fit in the room at `bytes_per_entry` each."""
    if room_bytes <= 0 or bytes_per_entry <= 0:
        return []
    fits = room_bytes // bytes_per_entry
    ordered = sorted(candidates, key=lambda c: (-c.hits, -c.last_used))
    return [c.entry_id for c in ordered[:fits]]


PLANS = ("recent", "access", "newest")  # "recent": assistant/precompute/coverage.py


def access_order(
    newest_first: Iterable[int],
    asked: Mapping[int, int],
    predicted: Mapping[int, int],
    predicted_weight: float,
) -> Iterator[int]:
    """Chunk ids, the one whose node is worth most first: by the questions that used each (a
    predicted question counts `predicted_weight` of an asked one), ties newest first; then the
    chunks no question used, newest first. Ids in the counts but not in `newest_first` (deleted
    chunks) are left out."""
    ids = list(newest_first)
    present = set(ids)
    score = {i: asked.get(i, 0) + predicted_weight * predicted.get(i, 0) for i in present}
    used = sorted((i for i in present if score[i] > 0), key=lambda i: (-score[i], -i))
    yield from used
    yield from (i for i in ids if score[i] <= 0)
