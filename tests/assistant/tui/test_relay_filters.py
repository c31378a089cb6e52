"""The TUI shows what the answer path read from the question (query terms or words)."""

from __future__ import annotations

from assistant import events as p
from assistant.tui.messages import AnswerStatusChanged
from assistant.tui.relay import _Relay


def test_filters_read_become_the_status_line():
    relay = _Relay(3, knowledge=None)
    shown = "from: Vince Kaminski · date: 2001-10-08..2001-10-14"
    [message] = relay.messages(p.FiltersRead("q", {"from": ["Vince"]}, shown, 4))
    assert isinstance(message, AnswerStatusChanged) and message.turn == 3
    assert shown in message.status and "4 mails" in message.status
    [message] = relay.messages(p.FiltersRead("q", {"from": ["Vince"]}, shown, 0))
    assert message.status.startswith("no mail meets")
