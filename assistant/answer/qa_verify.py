"""Verified QA-bank hits: a stored answer is served for a new question only when it answers it.
Cosine similarity alone serves "the same words about another entity" (another house number, a
birth's weight for its date); the checks here refuse those:

- the evidence check (the default, "evidence"): the new question's own retrieval and line scoring
  (no model) quote the line the stored answer quoted, and the names, numbers and dates it asks
  about agree with the stored question or its evidence mail (cache/verify.py's `Guard.slots`).
  Wording is left to the evidence: a paraphrase finds the same line, a near-miss (another
  person, date, amount, another line of the same mail) finds another. An entry stored without
  evidence lines falls back to the guard;
- the guard (cache/verify.py): what the embedding blurs must match in the text;
- the retrieval check: the stored answer's best source is still among the new question's top
  retrieved chunks, as it would be in the prompt had the question been answered afresh.

A refusal is not staleness: the entry stays as it is (it answers another question). Modes are the
values of CacheSettings.qa_verify; bench/studies/threshold.py measures each.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from assistant.answer.evidence import Found
from assistant.answer.quoted import line_key
from assistant.answer.text import asked_kinds, kind_terms
from assistant.config import ConfigError
from assistant.config_sections import CacheSettings
from assistant.events import AnswerDone
from assistant.knowledge.retrieval import Retriever
from cache.qa_entries import QAEntry
from cache.verify import Guard, Mismatch

VERIFY_MODES = ("evidence", "guard+retrieval", "guard", "retrieval", "off")
SameCheck = Callable[[str, str], bool]  # (stored question, new question) → the same


@dataclass(frozen=True)
class Verdict:
    served: bool
    # "ok", "guard:<field>" or "slots:<field>" (cache/verify.py's Mismatch.field), "retrieval",
    # "not found" (the new question's lines answer nothing), "weak" (its best line is under the
    # scorer's answer bar), "evidence" (another best line) or "kind" (another kind of answer)
    reason: str


class HitVerifier:
    def __init__(
        self,
        retriever: Retriever,
        settings: CacheSettings,
        guard: Guard | None = None,
        same: SameCheck | None = None,
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
        # the reader's "same question" (answer/judge.py): after every cut above has passed, a
        # stored answer is served only if the reader judges the questions the same
        # (bench/results/qa_hits_reader_final.json: it refuses near-misses the cuts let through)
        self.same = same

    @property
    def active(self) -> bool:
        return self.mode != "off"

    def verdict(
        self, question: str, vector: np.ndarray, entry: QAEntry, found: Found | None = None
    ) -> Verdict:
        """Whether `entry`'s answer may be served for `question` (embedded as `vector`; `found`:
        its own lines, for the evidence check)."""
        return QuestionCheck(self, question, vector, found).verdict(entry)

    def check(
        self, question: str, vector: np.ndarray, found: Found | None = None
    ) -> Callable[[QAEntry], bool] | None:
        """The check of a verified lookup (qa_memory.lookup_hit) for one question (it retrieves
        at most once, however many candidates it is asked about); None when verification is off.
        `found`: the question's own lines (LineFinder.find over its prompt's chunks), which the
        evidence check compares; without them an entry is checked by the guard."""
        return QuestionCheck(self, question, vector, found) if self.active else None

    def same_question(self, question: str, entry: QAEntry) -> bool:
        """The guard alone, whatever the mode: may `question`'s answer fill in `entry`?"""
        return self.guard.check(question, entry.question) is None


class QuestionCheck:
    """The checks of one new question against the candidates of one lookup."""

    def __init__(
        self, verifier: HitVerifier, question: str, vector: np.ndarray, found: Found | None = None
    ) -> None:
        self.verifier = verifier
        self.question = question
        self.vector = vector
        self.found = found

    def __call__(self, entry: QAEntry) -> bool:
        return self.verdict(entry).served

    def verdict(self, entry: QAEntry) -> Verdict:
        mode = self.verifier.mode
        if mode == "evidence":
            if entry.evidence and self.found is not None:
                return self.evidence(entry, self.found)
            if not entry.answer and self.found is not None and not self.found.not_found:
                # a kept "not found" (the night's: no sentence, no lines) while this
                # question's own quote finds a line: the mail answers now, it is written
                return Verdict(False, "found now")
            mode = "guard"  # a question-only entry, or no lines to compare: today's guard
        if "guard" in mode:
            mismatch = self.verifier.guard.check(self.question, entry.question)
            if mismatch is not None:
                return Verdict(False, f"guard:{mismatch.field}")
        if "retrieval" in mode and not self.retrieves(entry):
            return Verdict(False, "retrieval")
        return Verdict(True, "ok")

    def evidence(self, entry: QAEntry, found: Found) -> Verdict:
        """This question's own best line clears the line scorer's answer bar (unless it is the
        stored question again) and is the stored answer's best line; both ask for the same
        kind of answer where both ask for one (answer/text.py: a date, a number, a name …);
        and what this question names and adds agrees with the stored question and its line
        (cache/verify.py's Guard.slots)."""
        if found.not_found:
            return Verdict(False, "not found")
        repeat = line_key(self.question) == line_key(entry.question)
        if found.band != "answer" and not repeat:  # a doubted line vouches for no other question
            return Verdict(False, "weak")
        if line_key(entry.evidence[0][1]) != line_key(found.best_line):
            return Verdict(False, "evidence")
        if not same_kind(self.question, entry.question):
            return Verdict(False, "kind")
        mismatch = slot_mismatch(self.verifier.guard, self.question, entry, found)
        if mismatch:
            return Verdict(False, f"slots:{mismatch}")
        same = self.verifier.same
        if repeat:
            return Verdict(True, "ok")
        if same is None:  # no reader to judge "the same question": the text must say so
            mismatch = unjudged_mismatch(self.verifier.guard, self.question, entry.question)
            return Verdict(False, f"guard:{mismatch.field}") if mismatch else Verdict(True, "ok")
        if not same(entry.question, self.question):
            return Verdict(False, "reader")
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


def same_kind(question: str, stored: str) -> bool:
    """Both ask for the same kind of answer, where both ask for one (answer/text.py)."""
    ours, theirs = asked_kinds(question), asked_kinds(stored)
    return not (ours and theirs and ours != theirs)


def unjudged_mismatch(guard: Guard, question: str, stored: str) -> Mismatch | None:
    """Where no reader judges "the same question": none for the same question again, else the
    question guard's word check (bench/results/no_reader_guard.json: without it, near misses
    on the same quoted line were served)."""
    return None if line_key(question) == line_key(stored) else guard.check(question, stored)


def slot_mismatch(guard: Guard, question: str, entry: QAEntry, found: Found) -> str:
    """The slot where what `question` names or adds disagrees with the stored question and its
    lines (cache/verify.py's Guard.slots), "" where it agrees."""
    quoted = " ".join(line for _, line in entry.evidence)
    header = found.record.text.split("\n", 1)[0] if found.record is not None else ""
    mismatch = guard.slots(question, entry.question, quoted, header)
    return mismatch.field if mismatch else ""


def moved_off(scored: Found, judged: Found) -> bool:
    """The reader found nothing in the scorer's quote, or moved it to another line."""
    if judged.not_found:
        return True
    return line_key(judged.best_line) != line_key(scored.best_line)


def confirms_entry(entry: QAEntry, scored: Found, judged: Found) -> bool:
    """The reader's quote for a question served `entry` confirms the entry's own line: its
    first evidence line, or (an entry without one) the line scorer's quote, not moved."""
    if judged.judged != "confirmed":
        return False
    if entry.evidence:
        return line_key(judged.best_line) == line_key(entry.evidence[0][1])
    return not moved_off(scored, judged)


def disagree(served: AnswerDone, fresh: AnswerDone) -> bool:
    """Whether a served answer is wrong beside the one made afresh: both quote the same line
    (the hit's condition), so they differ in the model's sentence: the fresh one is confirmed
    and the served one is not, or each names a term of the kind asked that the other does not
    (6 March against 2 March; "March" against "2 March" is not a disagreement)."""
    if fresh.band != "answer":
        return False  # the fresh answer settles nothing
    if served.band != "answer" or served.span != fresh.span:
        return True
    asked = asked_kinds(fresh.question)
    ours = kind_terms(served.sentence, served.question, asked)
    theirs = kind_terms(fresh.sentence, fresh.question, asked)
    return bool(ours - theirs and theirs - ours)
