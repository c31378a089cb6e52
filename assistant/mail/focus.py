"""A follow-up's retrieval looks first in the last turn's threads: of the candidates for the
rewritten question, those of the focus threads come first (in their own order), then the rest.
Wraps the Selection (rerank/selection.py) so the answer path runs unchanged."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from assistant.knowledge.retrieval import Hit, Where
from assistant.rerank.selection import Selection, candidates, width

WIDE = 30  # candidates fetched, so a focus thread's chunk a little down the list is seen


def focus_first(hits: Sequence[Hit], threads: Sequence[str]) -> list[Hit]:
    """`hits` with those of `threads` first; each part keeps its order."""
    inside = [h for h in hits if h.record.thread_id and h.record.thread_id in threads]
    return inside + [h for h in hits if h not in inside]


class FocusedSelection:
    """A Selection whose candidates put the `focus` threads' chunks first."""

    def __init__(self, selection: Selection, focus: Sequence[str]) -> None:
        self.selection = selection
        self.focus = tuple(focus)
        self.settings = selection.settings
        self.retriever = selection.retriever
        self.reranker = selection.reranker

    def __call__(
        self, question: str, vector, background: bool = False, check: Callable | None = None
    ) -> list[Hit]:
        return self.rerank(question, self.candidates(question, vector, background), check)

    def candidates(
        self, question: str, vector, background: bool = False, where: Where | None = None
    ) -> list[Hit]:
        if not self.focus:
            return self.selection.candidates(question, vector, background, where)
        k = width(self.settings.answer.context_chunks, self.reranker)
        duplicates = self.settings.answer.duplicates
        hits = candidates(self.retriever, question, max(k, WIDE), duplicates, vector,
                          where=where)  # fmt: skip
        return focus_first(hits, self.focus)[:k]

    def rerank(self, question: str, hits: list[Hit], check: Callable | None = None) -> list[Hit]:
        return focus_first(self.selection.rerank(question, hits, check), self.focus)
