"""The evidence of an answer: the few sentences of the prompt's chunks that best match the
question, and whether an answer's names, numbers and dates appear in its sources."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Evidence:
    """One sentence (or mail line) of a source chunk that answers the question."""

    chunk_id: int
    sentence: str
