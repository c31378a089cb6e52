"""Which chunks a question gets: the fused hits, near-duplicates merged, then reranked when a
reranker is on. One function, so `search --rerank`, the prompt (pipeline.py) and the nightly
self-check (selfcheck.py) select the same way."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from assistant.knowledge.distinct import SPARE, distinct_hits
from assistant.knowledge.retrieval import Hit, Retriever
from assistant.rerank.reranker import Reranker


def candidates(
    retriever: Retriever,
    question: str,
    k: int,
    duplicates: str = "merge",
    vector: np.ndarray | None = None,
    search_mode: str = "hybrid",
    access_weight: float = 1.0,
) -> list[Hit]:
    """The best `k` fused hits; with duplicates "merge", SPARE more are fetched so the slot a
    merged near-duplicate frees goes to the next distinct chunk. `access_weight`: what the
    question counts for in the large index's hot/cold plan (Retriever.search)."""
    fetch = k if duplicates == "keep" else k + SPARE
    hits = retriever.search(
        question, k=fetch, mode=search_mode, query_vector=vector, access_weight=access_weight
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
) -> list[Hit]:
    """The `k` chunks for `question`, best first; `mode` overrides the reranker's current one
    (the self-check compares them), "off" keeping the fused order."""
    hits = candidates(
        retriever, question, width(k, reranker, mode), duplicates, vector, search_mode
    )
    if reranker is None:
        return hits[:k]
    if mode is None:
        return reranker.rerank(question, hits, k, check)
    return reranker.rerank(question, hits, k, check, mode=mode)
