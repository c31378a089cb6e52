"""Two of the line scorer's columns (answer/evidence.py FEATURES) that need no model: BM25 over
the candidate lines, and each line's best neighbour's cosine."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

from assistant.answer.text import terms


def neighbours(places: Sequence[tuple[int, int]], cosine: np.ndarray) -> np.ndarray:
    """Each line's best neighbour's cosine (the line before or after it in its chunk; `places`:
    each line's chunk id and place in its chunk): an answer often stands beside the line that
    names what the question is about."""
    at = {place: float(v) for place, v in zip(places, cosine, strict=True)}
    return np.array(
        [max(at.get((chunk, i + d), 0.0) for d in (-1, 1)) for chunk, i in places],
        dtype=np.float32,
    )


def bm25_scores(
    question: str, texts: Sequence[str], k1: float = 1.2, b: float = 0.75
) -> np.ndarray:
    """Okapi BM25 of each text for the question, with idf over the texts themselves, as a share
    of what a text holding every term of the question once would score: an absolute figure
    (the bar for "not found" needs one), not a rank among these texts."""
    docs = [Counter(terms(t)) for t in texts]
    query = set(terms(question))
    lengths = np.array([sum(d.values()) for d in docs], dtype=np.float32)
    norms = k1 * (1 - b + b * lengths / max(float(lengths.mean()), 1.0))
    out = np.zeros(len(docs), dtype=np.float32)
    whole = 0.0
    for term in query:
        df = sum(term in d for d in docs)
        idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
        tf = np.array([d[term] for d in docs], dtype=np.float32)
        out += idf * tf * (k1 + 1) / (tf + norms)
        whole += idf
    return out / whole if whole else out
