"""The reranker stage: orders the fused candidates by query likelihood, `off | full | pruned`.

`full` scores every candidate on llama.cpp (restoring cached passage KV where it can); `pruned`
runs the torch layer-wise forward that stops computing candidates once the top-k is decided.
Models load on first use, so a pipeline with the reranker on starts as fast as without.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from assistant.config import RerankerSettings
from assistant.knowledge.retrieval import Hit, zscore


class FullScorer(Protocol):
    def scores(self, query: str, passages: Sequence[str], use_doc_kv: bool = True,
               check: Callable[[], None] | None = None) -> np.ndarray: ...  # fmt: skip

    def precompute(self, passages: Sequence[str], should_stop: Callable[[], bool]) -> int: ...


class PrunedRanker(Protocol):
    def rank(self, query: str, passages: Sequence[str], k: int, threshold: float,
             exact_order: bool, check: Callable[[], None] | None = None): ...  # fmt: skip


class Reranker:
    def __init__(
        self,
        mode: str,
        settings: RerankerSettings,
        full: Callable[[], FullScorer] | None = None,
        pruned: Callable[[], PrunedRanker] | None = None,
    ) -> None:
        self.mode = mode
        self.settings = settings
        self._make = {"full": full, "pruned": pruned}
        self._models: dict[str, object] = {}

    @property
    def active(self) -> bool:
        return self.mode != "off"

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
        self, question: str, hits: list[Hit], k: int, check: Callable[[], None] | None = None
    ) -> list[Hit]:
        """The best `k` of `hits` for `question`, best first (the fused order when off).
        `check` is called between candidates (full) or layers (pruned); a background job's
        raises to step aside for the user."""
        if self.mode == "off" or len(hits) < 2:
            return hits[:k]
        texts = [h.record.text for h in hits]
        if self.mode == "pruned":
            s = self.settings
            model = self._model("pruned")
            run = model.rank(question, texts, k, s.threshold, s.exact_order, check=check)
            return [hits[i] for i in run.order[:k]]
        scores = self._model("full").scores(question, texts, check=check)
        return [hits[i] for i in self.order(scores, [h.score for h in hits])[:k]]

    def order(self, ql: np.ndarray, fused: Sequence[float]) -> list[int]:
        """Indices best first by (1 − w)·z(QL) + w·z(fused); ties keep the fused order."""
        w = self.settings.fused_weight
        combined = np.asarray(ql, dtype=np.float64)
        if w > 0:
            combined = (1 - w) * zscore(combined) + w * zscore(np.asarray(fused, dtype=float))
        return sorted(range(len(combined)), key=lambda i: (-combined[i], i))

    def precompute(self, passages: Sequence[str], should_stop: Callable[[], bool]) -> int:
        """Idle time: compute the document KV of `passages` for the active mode."""
        if self.mode == "full":
            return self._model("full").precompute(passages, should_stop)
        if self.mode == "pruned" and not should_stop():
            return self._model("pruned").precompute(passages)
        return 0
