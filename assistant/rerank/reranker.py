"""The reranker stage: orders the fused candidates, one of `off | full | cross | cross-pruned |
auto`.

`full` scores every candidate by query likelihood on llama.cpp (restoring cached passage KV where
it can; its pruned torch forward is retired to bench/ql, config.RETIRED says why). `cross`
scores every candidate with a cross-encoder; `cross-pruned` is its layer-wise pruned forward
(grating.py). `auto` is what the nightly self-check turned on (selfcheck.py): fused unless a
reranker beat it on the user's own mail. Models load on first use, so an answer path with the
reranker on starts as fast as without.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from assistant.config_sections import RerankerSettings
from assistant.knowledge.retrieval import Hit, zscore


class FullScorer(Protocol):
    def scores(self, query: str, passages: Sequence[str], use_doc_kv: bool = True,
               check: Callable[[], None] | None = None) -> np.ndarray: ...  # fmt: skip

    def precompute(self, passages: Sequence[str], should_stop: Callable[[], bool]) -> int: ...


class PrunedRanker(Protocol):
    def rank(self, query: str, passages: Sequence[str], k: int, threshold: float,
             exact_order: bool, check: Callable[[], None] | None = None): ...  # fmt: skip


SCORED = ("full", "cross")  # every candidate scored, then ordered (with the fused weight)
PRUNED = ("cross-pruned",)  # the layer-wise forward orders them itself


class Reranker:
    def __init__(
        self,
        mode: str,
        settings: RerankerSettings,
        full: Callable[[], FullScorer] | None = None,
        *,
        cross: Callable[[], FullScorer] | None = None,
        cross_pruned: Callable[[], PrunedRanker] | None = None,
        decide: Callable[[Sequence[str]], str] | None = None,
    ) -> None:
        """`decide(available)` (auto): the mode the self-check turned on, "off" when none."""
        self.mode = mode
        self.settings = settings
        made = {"full": full, "cross": cross, "cross-pruned": cross_pruned}
        self._make = {m: f for m, f in made.items() if f is not None}
        self._decide = decide
        self._models: dict[str, object] = {}

    @property
    def current(self) -> str:
        """The mode questions are reranked with now (auto: the self-check's choice)."""
        if self.mode != "auto":
            return self.mode
        return self._decide(self.available) if self._decide is not None else "off"

    @property
    def active(self) -> bool:
        return self.current != "off"

    @property
    def available(self) -> list[str]:
        """The reranking modes this configuration can run (what the self-check compares)."""
        return list(self._make)

    @property
    def candidates(self) -> int:
        """How many fused hits to retrieve for the reranker to order."""
        return self.settings.candidates

    def _model(self, mode: str):
        if mode not in self._models:
            factory = self._make.get(mode)
            if factory is None:
                raise ValueError(f"no {mode} reranker model configured")
            self._models[mode] = factory()
        return self._models[mode]

    def rerank(
        self,
        question: str,
        hits: list[Hit],
        k: int,
        check: Callable[[], None] | None = None,
        mode: str | None = None,
    ) -> list[Hit]:
        """The best `k` of `hits` for `question`, best first (the fused order when off), in
        `mode` (default: the current one). `check` is called between candidates or batches
        (scored) or layers (pruned); a background job's raises to step aside for the user."""
        mode = mode or self.current
        if mode == "off" or len(hits) < 2:
            return hits[:k]
        texts = [h.record.text for h in hits]
        if mode in PRUNED:
            s = self.settings
            model = self._model(mode)
            run = model.rank(question, texts, k, s.cross_threshold, s.exact_order, check=check)
            return [hits[i] for i in run.order[:k]]
        scores = self._model(mode).scores(question, texts, check=check)
        return [hits[i] for i in self.order(scores, [h.score for h in hits])[:k]]

    def order(self, scores: np.ndarray, fused: Sequence[float]) -> list[int]:
        """Indices best first by (1 − w)·z(scores) + w·z(fused); ties keep the fused order."""
        w = self.settings.fused_weight
        combined = np.asarray(scores, dtype=np.float64)
        if w > 0:
            combined = (1 - w) * zscore(combined) + w * zscore(np.asarray(fused, dtype=float))
        return sorted(range(len(combined)), key=lambda i: (-combined[i], i))

    def precompute(self, passages: Sequence[str], should_stop: Callable[[], bool]) -> int:
        """Idle time: compute the document KV of `passages` for the current mode (QL only: a
        cross-encoder keeps nothing per document)."""
        mode = self.current
        if mode == "full":
            return self._model("full").precompute(passages, should_stop)
        return 0
