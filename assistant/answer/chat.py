"""A conversation: each question is turned into a standalone one against the last turn
(assistant/mail/followup.py) and answered by the Answerer, a follow-up's retrieval looking first
in the last turn's threads. The `chat` command and the app's chat screen both ask through it."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from assistant.events import AnswerDone, QuestionRewritten
from assistant.mail.followup import Conversation, Rewrite, Turn


class Answers(Protocol):
    def answer(
        self, question: str, *args: Any, stop: Callable[[], bool] | None = None
    ) -> Iterator[Any]: ...


# an answerer whose retrieval looks first in the given threads (Services.focused_answerer)
Focused = Callable[[Sequence[str]], Answers]


class Chat:
    """Turns kept, follow-ups rewritten; `answer` has the Answerer's shape (the app's relay
    reads its events alike), with a QuestionRewritten first when the question was rewritten."""

    def __init__(self, answerer: Answers, focused: Focused | None = None) -> None:
        self.answerer = answerer
        self.focused = focused
        self.conversation = Conversation()

    def answer(
        self, question: str, *args: Any, stop: Callable[[], bool] | None = None
    ) -> Iterator[Any]:
        """`stop`: the asker's (Answerer.answer); a turn stopped is not kept."""
        rewrite = self.conversation.rewrite(question)
        if rewrite.changed:
            yield QuestionRewritten(rewrite.asked, rewrite.standalone, rewrite.because)
        done = None
        for event in self._answerer(rewrite).answer(rewrite.standalone, *args, stop=stop):
            if isinstance(event, AnswerDone):
                done = event
            yield event
        if done is not None:
            self.conversation.add(turn_of(question, rewrite, done))

    def _answerer(self, rewrite: Rewrite) -> Answers:
        if rewrite.focus and self.focused is not None:
            return self.focused(rewrite.focus)
        return self.answerer

    def refuse_hit(self, question: str) -> Any:
        """As Answerer.refuse_hit, for `question` as it was last answered; when that was the
        last turn, the turn is taken back (asked again, it leans on the turn before)."""
        turns = self.conversation.turns
        standalone = question
        if turns and turns[-1].question == question:
            standalone = turns.pop().standalone
        return self.answerer.refuse_hit(standalone)


def turn_of(question: str, rewrite: Rewrite, done: AnswerDone) -> Turn:
    """The turn a next question leans on; the quoted mail first among its sources."""
    quoted = (done.mail or {}).get("chunk_id")
    sources = sorted(done.sources, key=lambda s: s.get("chunk_id") != quoted)
    return Turn(question, rewrite.standalone, done.answer, sources)
