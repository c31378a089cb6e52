from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

import numpy as np

from assistant.config_sections import RerankerSettings
from assistant.knowledge.retrieval import Hit
from assistant.rerank.reranker import Reranker


class FakeScorer:
    """QL = the number of question words in the passage (a deterministic stand-in)."""

    def __init__(self) -> None:
        self.calls = 0

    def scores(self, query: str, passages: Sequence[str], check=None) -> np.ndarray:
        self.calls += 1
        words = set(query.split())
        return np.array([float(len(words & set(p.split()))) for p in passages])

    def precompute(self, passages, should_stop) -> int:
        return len(passages)


def hits(texts: list[str]) -> list[Hit]:
    fused = np.linspace(1.0, 0.1, len(texts))  # the fused order is the given order
    return [
        Hit(i, float(s), None, None, SimpleNamespace(text=t))
        for i, (t, s) in enumerate(zip(texts, fused, strict=True))
    ]


TEXTS = ["red apples", "a green pear", "the kitchen starts monday", "kitchen tiles", "monday"]
QUESTION = "when does the kitchen work start monday"


def ids(result: list[Hit]) -> list[int]:
    return [h.chunk_id for h in result]


def test_off_keeps_the_fused_order_and_loads_nothing():
    scorer = FakeScorer()
    reranker = Reranker("off", RerankerSettings(), full=lambda: scorer)
    assert ids(reranker.rerank(QUESTION, hits(TEXTS), 3)) == [0, 1, 2]
    assert scorer.calls == 0


def test_full_orders_by_query_likelihood_and_loads_the_model_once():
    made = []
    reranker = Reranker("full", RerankerSettings(), full=lambda: made.append(1) or FakeScorer())
    assert ids(reranker.rerank(QUESTION, hits(TEXTS), 3)) == [2, 3, 4]
    reranker.rerank(QUESTION, hits(TEXTS), 3)
    assert made == [1]


def test_the_fused_weight_interpolates_the_two_orders():
    settings = RerankerSettings(fused_weight=1.0)
    reranker = Reranker("full", settings, full=FakeScorer)
    assert ids(reranker.rerank(QUESTION, hits(TEXTS), 5)) == [0, 1, 2, 3, 4]
    settings.fused_weight = 0.5
    assert ids(reranker.rerank(QUESTION, hits(TEXTS), 2)) == [2, 0]  # QL best, fused best


def test_cross_pruned_takes_the_pruned_order_with_the_configured_policy():
    seen = {}

    class FakePruned:
        def rank(self, query, passages, k, threshold, exact_order, check=None):
            seen.update(k=k, threshold=threshold, exact=exact_order)
            return SimpleNamespace(order=[4, 0, 1, 2, 3])

    settings = RerankerSettings(cross_threshold=0.3, exact_order=True)
    reranker = Reranker("cross-pruned", settings, cross_pruned=FakePruned)
    assert ids(reranker.rerank(QUESTION, hits(TEXTS), 2)) == [4, 0]
    assert seen == {"k": 2, "threshold": 0.3, "exact": True}
