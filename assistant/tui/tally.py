"""This session's answers, counted for the cache screen's hit rates."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assistant.events import AnswerDone


def plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


@dataclass
class Tally:
    questions: int = 0
    qa_hits: int = 0
    kv_hits: int = 0  # generated answers that restored some prompt KV
    reused_tokens: int = 0
    prompt_tokens: int = 0

    def record(self, done: AnswerDone) -> None:
        self.questions += 1
        self.qa_hits += done.qa_hit
        self.kv_hits += done.kv_reused_tokens > 0
        self.reused_tokens += done.kv_reused_tokens
        self.prompt_tokens += done.prompt_tokens

    def summary(self) -> str:
        if not self.questions:
            return "no questions yet"
        generated = self.questions - self.qa_hits
        token_share = self.reused_tokens / self.prompt_tokens if self.prompt_tokens else 0.0
        return (
            f"{plural(self.questions, 'question', 'questions')} · QA hits {self.qa_hits} "
            f"({self.qa_hits / self.questions:.0%}) · KV reused in {self.kv_hits} of "
            f"{generated} generated ({token_share:.0%} of prompt tokens)"
        )
