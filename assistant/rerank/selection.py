"""Which chunks a question gets: the fused hits, near-duplicates merged, then reranked when a
reranker is on. One function, so `search --rerank`, the prompt (answer.py, precompute through
`Selection`) and the nightly self-check (selfcheck.py) select the same way."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from assistant.knowledge.distinct import SPARE, distinct_hits
from assistant.knowledge.retrieval import Hit, Retriever, Where
from assistant.rerank.reranker import Reranker

if TYPE_CHECKING:
    from assistant.config import Settings


def candidates(
    retriever: Retriever,
    question: str,
    k: int,
    duplicates: str = "merge",
    vector: np.ndarray | None = None,
    search_mode: str = "hybrid",
    access_weight: float = 1.0,
    where: Where | None = None,
) -> list[Hit]:
    """The best `k` fused hits; with duplicates "merge", SPARE more are fetched so the slot a
    merged near-duplicate frees goes to the next distinct chunk. `access_weight`: what the
    question counts for in the large index's hot/cold plan (Retriever.search); `where`: the
    mail filters that narrow the candidates first."""
    fetch = k if duplicates == "keep" else k + SPARE
    hits = retriever.search(
        question, fetch, search_mode, vector, access_weight=access_weight, where=where
    )
    if duplicates == "keep":
        return hits
    return distinct_hits(hits, k, retriever)


def width(k: int, reranker: Reranker | None, mode: str | None = None) -> int:
    """How many candidates to fetch for `k` chunks: the reranker's set when it runs."""
    if reranker is None:
        return k
    runs = reranker.active if mode is None else mode != "off"
    return max(k, reranker.candidates) if runs else k


def select(
    retriever: Retriever,
    reranker: Reranker | None,
    question: str,
    k: int,
    duplicates: str = "merge",
    *,
    vector: np.ndarray | None = None,
    search_mode: str = "hybrid",
    check: Callable[[], None] | None = None,
    mode: str | None = None,
    where: Where | None = None,
) -> list[Hit]:
    """The `k` chunks for `question`, best first; `mode` overrides the reranker's current one
    (the self-check compares them), "off" keeping the fused order; `where` narrows first."""
    n = width(k, reranker, mode)
    hits = candidates(retriever, question, n, duplicates, vector, search_mode, where=where)
    if reranker is None:
        return hits[:k]
    if mode is None:
        return reranker.rerank(question, hits, k, check)
    return reranker.rerank(question, hits, k, check, mode=mode)


class Selection:
    """The prompt's chunks for a question, as the settings say: what the answer path and
    precompute both call, so background jobs fill the caches with the prefixes the user's
    question will use."""

    def __init__(self, settings: Settings, retriever: Retriever, reranker: Reranker | None) -> None:
        self.settings = settings
        self.retriever = retriever
        self.reranker = reranker

    def __call__(
        self,
        question: str,
        vector,
        background: bool = False,
        check: Callable[[], None] | None = None,
    ) -> list[Hit]:
        """The chunks a prompt for `question` gets, in prompt order (reranked when it is on).
        `check` is called between the reranker's pieces (a background job's step-aside)."""
        return self.rerank(question, self.candidates(question, vector, background), check)

    def candidates(
        self, question: str, vector, background: bool = False, where: Where | None = None
    ) -> list[Hit]:
        """The fused hits, near-duplicates merged: the prompt's chunks, or the reranker's wider
        candidate set. A `background` (predicted) question counts `predicted_weight` of an
        asked one in the large index's hot/cold plan; `where` narrows the candidates first."""
        k = width(self.settings.answer.context_chunks, self.reranker)
        duplicates = self.settings.answer.duplicates
        weight = self.settings.retrieval.predicted_weight if background else 1.0
        return candidates(self.retriever, question, k, duplicates, vector, "hybrid", weight, where)

    def rerank(
        self, question: str, hits: list[Hit], check: Callable[[], None] | None = None
    ) -> list[Hit]:
        """The prompt's chunks in prompt order: the reranker orders `candidates`' distinct hits,
        so near-duplicates never take two slots here either."""
        k = self.settings.answer.context_chunks
        if self.reranker is None:
            return hits[:k]
        return self.reranker.rerank(question, hits, k, check)
