"""The KV reuse settings as plain values: the reuse modes and the repair policy parsed from its
name (what each does: llm/reuse.py). Config validates `[cache] reuse` and `repair` with these and
llm/reuse applies them; nothing here touches the runtime, so settings never import it."""

from __future__ import annotations

from dataclasses import dataclass

REUSE_MODES = ("exact", "any-order")


@dataclass(frozen=True)
class Repair:
    kind: str  # "none" | "sink" | "blend" | "evidence"
    amount: int = 0  # sink: tokens per chunk; blend: percent of a chunk's tokens

    @property
    def quotes(self) -> bool:
        """Whether the evidence segment takes the KV of the chunk runs it quotes."""
        return self.kind != "evidence"


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


def check_repair(text: str) -> None:
    """A `[cache] repair` setting: a policy's name, or "auto" (the one measured for the writer's
    model, llm/models.py repair_for); ValueError otherwise."""
    if text != "auto":
        parse_repair(text)
