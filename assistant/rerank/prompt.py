"""Query-likelihood prompts: the passage first (its KV is reusable for every question), then an
instruction, then the question whose token log-probabilities are the score (UPR)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

Tokenize = Callable[..., list[int]]  # (text, first=False) → token ids, as LocalLLM.tokenize


@dataclass(frozen=True)
class QLPrompt:
    name: str
    head: str  # before the passage; with the passage and `tail` it forms the cached prefix
    tail: str  # after the passage
    instruction: str  # after the prefix, before the question; evaluated per question
    query_lead: str = " "  # joined to the question so it tokenizes as mid-sentence words


PROMPTS: dict[str, QLPrompt] = {
    p.name: p
    for p in (
        QLPrompt(
            "upr", "Passage: ", "\n", "Please write a question based on this passage.\nQuestion:"
        ),
        QLPrompt("short", "Passage: ", "\n", "A question this passage answers:"),
        QLPrompt(
            "search",
            "Passage: ",
            "\n",
            "A web search query for which this passage is the best result:",
        ),
    )
}
DEFAULT_PROMPT = "upr"


def get_prompt(name: str) -> QLPrompt:
    try:
        return PROMPTS[name]
    except KeyError:
        raise ValueError(
            f"unknown reranker prompt {name!r}; choose one of {', '.join(PROMPTS)}"
        ) from None


class QLTokens:
    """A prompt's token segments: the passage prefix (question-independent, so its KV can be
    cached) and the suffix (instruction + question)."""

    def __init__(self, tokenize: Tokenize, prompt: QLPrompt, max_passage_tokens: int) -> None:
        self.tokenize = tokenize
        self.prompt = prompt
        self.max_passage_tokens = max_passage_tokens

    def prefix(self, passage: str) -> list[int]:
        """BOS + head, the passage (cut to max_passage_tokens), tail; tokenized piecewise."""
        body = self.tokenize(passage.strip())[: self.max_passage_tokens]
        return self.tokenize(self.prompt.head, first=True) + body + self.tokenize(self.prompt.tail)

    def suffix(self, query: str, instruction: str | None = None) -> tuple[list[int], int]:
        """(instruction + question tokens, how many of them are the question)."""
        lead = self.tokenize(self.prompt.instruction if instruction is None else instruction)
        question = self.tokenize(self.prompt.query_lead + query.strip())
        return lead + question, len(question)
