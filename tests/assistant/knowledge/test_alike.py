"""Nearly alike chunks found without comparing all pairs (knowledge/alike.py)."""

from __future__ import annotations

import numpy as np

from assistant.knowledge import alike

LETTER = (
    "I am writing to ask you to support the petition to unfreeze the employees' retirement "
    "accounts and to speak openly about the partnerships before the hearing next week. "
    "Families like mine trusted the leadership of this company; please stand with them."
)


def _mail(sender: str, body: str) -> str:
    return f"From: {sender} | Date: 2001-11-19 | Subject: Protect our savings\n{body}"


def test_letters_with_other_names_are_one_group_and_other_mail_stays_apart():
    letters = [
        _mail(f"S{i}", f"Dear Sir, {LETTER} Sincerely, Name{i} of Town{i}") for i in range(40)
    ]
    others = [
        _mail("Sherri", "The board deck goes out on Friday; Cliff wants the numbers by noon."),
        _mail("Paul", "The investment committee meets Wednesday at 7:30 in my office. " * 3),
        _mail("Bram", "Thanks!"),
        _mail("Elin", "Thanks!"),  # a short body is compared with its header: two messages
        "",
    ]
    assert alike.groups(letters + others) == [list(range(40))]


def test_signatures_agree_about_as_often_as_the_texts_share_shingles():
    a = _mail("A", LETTER)
    b = _mail("B", LETTER.replace("next week", "on Monday"))
    sig, has = alike.signatures([a, b, a, ""])
    assert has.tolist() == [True, True, True, False]
    assert (sig[0] == sig[2]).all()  # the same text, the same signature, in any process
    assert 0.6 <= np.mean(sig[0] == sig[1]) < 1.0
