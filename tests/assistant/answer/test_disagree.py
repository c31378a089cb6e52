"""When a remembered answer is wrong beside a fresh one (the night's self-check and ask --fresh
tighten the entry then): both quote the same line, so only the model's sentences can differ."""

from __future__ import annotations

import pytest

from assistant.answer.qa_verify import disagree
from assistant.events import AnswerDone

Q = "When does the demolition start?"


def done(sentence: str, band: str = "answer", span: str = "2 March") -> AnswerDone:
    return AnswerDone(Q, "…", [], False, 0, 0, {}, span=span, sentence=sentence, band=band)


@pytest.mark.parametrize(
    ("served", "fresh", "wrong"),
    [
        (done("It starts on Friday 6 March."), done("It starts on Monday 2 March."), True),
        (done("It starts in March."), done("It starts on Monday 2 March."), False),  # less said
        (done("It starts on Monday 2 March."), done("Demolition is on 2 March."), False),
        (done("", band="weak"), done("It starts on Monday 2 March."), True),  # not confirmed
        (done("It starts on Friday 6 March."), done("", band="weak"), False),  # settles nothing
        (done("It starts on Monday 2 March."), done("", band="answer"), False),
        (done("On 2 March.", span="6 March"), done("On 2 March."), True),  # another span
    ],
)  # fmt: skip
def test_a_remembered_answer_is_wrong_only_beside_a_confirmed_fresh_one(served, fresh, wrong):
    assert disagree(served, fresh) is wrong
