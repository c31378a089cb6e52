"""The evidence of an answer: the few sentences of the prompt's chunks that best match the
question, and whether an answer's names, numbers and dates appear in its sources."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Evidence:
    """One sentence (or mail line) of a source chunk that answers the question."""

    chunk_id: int
    sentence: str


_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_TERM = re.compile(r"\d[\d.,:/-]*\d|\d|\b[A-Z][a-zA-Z]+\b")


def sentences(text: str) -> list[str]:
    """The lines and sentences of a chunk, quote markers dropped."""
    parts = (p.strip().lstrip(">").strip() for p in _SPLIT.split(text))
    return [p for p in parts if len(p) > 3]


def select_evidence(
    question: str, question_vector: np.ndarray, records: Sequence, embedder, limit: int = 2
) -> list[Evidence]:
    """The `limit` sentences of `records` most similar to the question (cosine)."""
    pairs = [(r.chunk_id, s) for r in records for s in sentences(r.text)]
    if not pairs:
        return []
    vectors = embedder.embed_batch([s for _, s in pairs])
    order = np.argsort(-(vectors @ np.asarray(question_vector, dtype=np.float32)), kind="stable")
    return [Evidence(*pairs[i]) for i in order[:limit]]


def unsupported_terms(answer: str, sources: Sequence[str], question: str) -> list[str]:
    """Numbers and capitalised words of the answer found in neither the sources nor the
    question."""
    known = " ".join([*sources, question]).lower()
    return [t for t in dict.fromkeys(_TERM.findall(answer)) if t.lower() not in known]
