"""Verified QA-bank hits: a stored answer is served for a new question only when the two ask the
same thing. Cosine similarity alone serves "the same words about another entity" (another house
number, a birth's weight for its date); the checks here refuse those:

- the guard (cache/verify.py): what the embedding blurs must match in the text;
- the retrieval check: the stored answer's best source is still among the new question's top
  retrieved chunks, as it would be in the prompt had the question been answered afresh.

A refusal is not staleness: the entry stays as it is (it answers another question). Modes are the
values of CacheSettings.qa_verify; bench/threshold.py measures each.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from assistant.config import CacheSettings, ConfigError
from assistant.knowledge.retrieval import Retriever
from cache.qa_bank import QAEntry
from cache.verify import Guard

VERIFY_MODES = ("guard+retrieval", "guard", "retrieval", "off")


@dataclass(frozen=True)
class Verdict:
    served: bool
    reason: str  # "ok", "guard:<field>" (cache/verify.py's Mismatch.field) or "retrieval"


class HitVerifier:
    def __init__(
        self, retriever: Retriever, settings: CacheSettings, guard: Guard | None = None
    ) -> None:
        if settings.qa_verify not in VERIFY_MODES:
            raise ConfigError(
                f"cache.qa_verify: expected one of {', '.join(VERIFY_MODES)}, "
                f"got {settings.qa_verify!r}"
            )
        self.retriever = retriever
        self.mode = settings.qa_verify
        self.k = settings.qa_retrieval_k
        self.guard = guard or Guard()

    @property
    def active(self) -> bool:
        return self.mode != "off"

    def verdict(self, question: str, vector: np.ndarray, entry: QAEntry) -> Verdict:
        """Whether `entry`'s answer may be served for `question` (embedded as `vector`)."""
        return QuestionCheck(self, question, vector).verdict(entry)

    def check(self, question: str, vector: np.ndarray) -> Callable[[QAEntry], bool] | None:
        """QABank.lookup's `verify` for one question (it retrieves at most once, however many
        candidates it is asked about); None when verification is off."""
        return QuestionCheck(self, question, vector) if self.active else None

    def same_question(self, question: str, entry: QAEntry) -> bool:
        """The guard alone, whatever the mode: may `question`'s answer fill in `entry`?"""
        return self.guard.check(question, entry.question) is None


class QuestionCheck:
    """The checks of one new question against the candidates of one lookup."""

    def __init__(self, verifier: HitVerifier, question: str, vector: np.ndarray) -> None:
        self.verifier = verifier
        self.question = question
        self.vector = vector

    def __call__(self, entry: QAEntry) -> bool:
        return self.verdict(entry).served

    def verdict(self, entry: QAEntry) -> Verdict:
        mode = self.verifier.mode
        if "guard" in mode:
            mismatch = self.verifier.guard.check(self.question, entry.question)
            if mismatch is not None:
                return Verdict(False, f"guard:{mismatch.field}")
        if "retrieval" in mode and not self.retrieves(entry):
            return Verdict(False, "retrieval")
        return Verdict(True, "ok")

    def retrieves(self, entry: QAEntry) -> bool:
        """The entry's best source is among this question's top chunks (no sources: unknown,
        so not served)."""
        ids = entry.chunk_ids
        return bool(ids) and ids[0] in self.top

    @cached_property
    def top(self) -> set[int]:
        hits = self.verifier.retriever.search(
            self.question, k=self.verifier.k, query_vector=self.vector
        )
        return {h.chunk_id for h in hits}
