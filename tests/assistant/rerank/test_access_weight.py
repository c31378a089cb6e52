"""Predicted questions count less than asked ones in the large index's hot/cold plan: the weight
travels from precompute's background selection through the selection to Retriever.search."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from assistant.config import Settings
from assistant.rerank.selection import Selection


class RecordingRetriever:
    """Answers no hits and records the access weight each search was given."""

    def __init__(self) -> None:
        self.weights: list[float] = []
        self.embedder = SimpleNamespace(name="no bound")  # distinct_hits asks for its bound

    def vectors(self, chunk_ids):
        return {}

    def search(
        self, query, k=None, mode="hybrid", query_vector=None, access_weight=1.0, where=None
    ):
        self.weights.append(access_weight)
        return []


def test_a_background_question_counts_the_predicted_weight() -> None:
    settings = Settings()
    settings.retrieval.predicted_weight = 0.25
    retriever = RecordingRetriever()
    select = Selection(settings, retriever, None)  # type: ignore[arg-type]
    vector = np.zeros(4, dtype=np.float32)
    for duplicates in ("merge", "keep"):
        settings.answer.duplicates = duplicates
        select.candidates("when does the kitchen start?", vector)
        select.candidates("when does the kitchen start?", vector, background=True)
    assert retriever.weights == [1.0, 0.25, 1.0, 0.25]
