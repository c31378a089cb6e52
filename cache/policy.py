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
"""

from __future__ import annotations

from collections.abc import Sequence
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
