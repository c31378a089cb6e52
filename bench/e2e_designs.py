"""The cache designs bench/e2e.py compares: which layers answer, what precompute fills.

Each design runs on its own copy of the same imported home, with its own cache folder. A design
that needs a part the code base does not have yet is skipped with the reason, never faked.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Design:
    name: str
    label: str
    qa: bool = False  # answers may come from the QA bank
    kv: bool = False  # prompt prefixes are restored from / saved to the KV tree
    precompute: str | None = None  # None | "policy" (PerCache: τ picks the strategy) | "qa_only"
    tau: float | None = None  # the QA-bank τ, when not the configured one
    # [precompute] decode_cutoff, when not the configured one (0: predictions only prefilled)
    decode_cutoff: float | None = None
    rerank: str | None = None  # the reranker switch ("pruned"), when the design needs one
    reuse: tuple[str, str] | None = None  # [cache] reuse and repair, when not the configured


# PerCache; the designs below it are full with one thing changed
FULL = Design(
    "full",
    "PerCache: both layers + precompute, strategy from the configured τ, exact prefix reuse",
    qa=True,
    kv=True,
    precompute="policy",
    reuse=("exact", "evidence"),  # PerCache's prefix tree, whatever [cache] reuse says
)
DESIGNS = (
    Design("naive", "no cache: retrieve, prefill, decode every time"),
    Design("ragcache", "KV tree, reactive only (RAGCache)", kv=True),
    Design("meancache", "QA bank, reactive only (MeanCache)", qa=True),
    Design(
        "sleeptime",
        "predicted questions answered into the QA bank; no KV (sleep-time compute)",
        qa=True,
        precompute="qa_only",
    ),
    Design("ragcache+meancache", "both layers, reactive only", qa=True, kv=True),
    FULL,
    replace(
        FULL,
        name="full-any",
        label="full, with any-order KV reuse: every chunk node serves wherever its chunk lands "
        '(repair "none": the evidence lines quoted from the moved chunks)',
        reuse=("any-order", "none"),
    ),
    replace(
        FULL,
        name="full-any-ev",
        label='full-any, the evidence lines computed over the placed chunks (repair "evidence")',
        reuse=("any-order", "evidence"),
    ),
    replace(
        FULL,
        name="full-any-ev-s1",
        label="full-any-ev with its predicted questions prefilled only, never answered "
        "(strategy 1 whatever the serving floor: the default before verified hits decided it)",
        reuse=("any-order", "evidence"),
        decode_cutoff=0.0,
    ),
    replace(
        FULL,
        name="full-s2",
        label="PerCache at τ 0.85 (< decode cutoff): predictions decoded (strategy 2)",
        tau=0.85,
    ),
    replace(
        FULL, name="full+pruned", label="full, with the pruned reranker (issue 7)", rerank="pruned"
    ),
)
SINGLE_LAYER = ("ragcache", "meancache", "sleeptime")


def skip_reason(design: Design, settings: object) -> str | None:
    """Why `design` cannot run on this code base (None: it can)."""
    if design.rerank is None:
        return None
    if importlib.util.find_spec("assistant.rerank") is None or not hasattr(settings, "rerank"):
        return "the pruned reranker (issue 7, assistant/rerank) is not on main yet"
    if design.rerank == "pruned":
        return "the pruned QL reranker is retired to bench/ql (issue 36): no mode of the app"
    return None


def select(names: str | None, designs: Sequence[Design] = DESIGNS) -> list[Design]:
    """The designs named in a comma-separated list (all when None), in the canonical order."""
    if not names:
        return list(designs)
    wanted = {n.strip() for n in names.split(",") if n.strip()}
    unknown = wanted - {d.name for d in designs}
    if unknown:
        known = ", ".join(d.name for d in designs)
        raise ValueError(f"unknown design(s) {', '.join(sorted(unknown))}; known: {known}")
    return [d for d in designs if d.name in wanted]


def rotated(items: Sequence, turn: int) -> list:
    """`items` started at position `turn` (mod its length): the run order for one question, so
    no design always runs first (right after another design's heavy work) on a noisy machine."""
    if not items:
        return []
    k = turn % len(items)
    return [*items[k:], *items[:k]]
