"""What the email reader drops on the way (a message it cannot parse, a date it cannot read) is
said in the log, not only swallowed."""

from __future__ import annotations

import logging

import pytest

from assistant.ingest import emails
from assistant.ingest.types import Issue
from tests.conftest import make_email


def test_an_unparseable_message_is_an_issue_and_a_logged_traceback(monkeypatch, caplog):
    def broken(*args, **kwargs):
        raise RuntimeError("parser bug")

    monkeypatch.setattr(emails, "parse_email", broken)
    with caplog.at_level(logging.INFO, logger="assistant.ingest.emails"):
        issue = emails.read_message(b"Subject: x\n\nbody\n", "box.mbox", "message 3")
    assert isinstance(issue, Issue) and "parser bug" in issue.reason
    (record,) = caplog.records
    assert record.levelno == logging.WARNING and "message 3" in record.getMessage()
    assert record.exc_info and record.exc_info[0] is RuntimeError


@pytest.mark.parametrize("date", ["not a date", "Mon, 99 Foo 2024 25:61:00 +0000"])
def test_an_unreadable_date_is_logged(caplog, date):
    raw = make_email(subject="Tiles", body="Warm Grey.", msgid="<d@x>").as_bytes()
    raw = raw.replace(b"Subject: Tiles", f"Date: {date}\nSubject: Tiles".encode())
    with caplog.at_level(logging.INFO, logger="assistant.ingest.emails"):
        emails.read_message(raw, "box.mbox", "message 1")
    assert any("unreadable" in r.getMessage() and date in r.getMessage() for r in caplog.records)
