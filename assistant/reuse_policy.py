"""The KV reuse settings as plain values: the reuse modes and the repair policy parsed from its
name (what each does: llm/reuse.py). Config validates `[cache] reuse` and `repair` with these and
llm/reuse applies them; nothing here touches the runtime, so settings never import it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

REUSE_MODES = ("exact", "any-order")
RUN = 8  # blend repairs runs of this many consecutive tokens


@dataclass(frozen=True)
class Repair:
    kind: str  # "none" | "sink" | "blend" | "evidence"
    amount: int = 0  # sink: tokens per chunk; blend: percent of a chunk's tokens

    @property
    def quotes(self) -> bool:
        """Whether the evidence segment takes the KV of the chunk runs it quotes."""
        return self.kind != "evidence"

    def spans(self, placed: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
        """The [start, end) position runs to re-decode, for chunks placed at (start, length)."""
        if self.kind == "sink":
            return [(s, s + min(self.amount, n)) for s, n in placed if self.amount > 0]
        if self.kind == "blend":
            return [run for s, n in placed for run in _spread(s, n, self.amount)]
        return []


def parse_repair(text: str) -> Repair:
    """A policy from its name: "none", "sink-N" (N ≥ 1 tokens), "blend-R" (R in 1..100 %) or
    "evidence"."""
    if text in ("none", "evidence"):
        return Repair(text)
    kind, _, amount = text.partition("-")
    if kind in ("sink", "blend") and amount.isdigit():
        value = int(amount)
        if value >= 1 and (kind == "sink" or value <= 100):
            return Repair(kind, value)
    raise ValueError(
        f"expected none, sink-N (N ≥ 1), blend-R (R in 1..100) or evidence, got {text!r}"
    )


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
