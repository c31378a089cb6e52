"""A small mailbox with senders, recipients, dates, folders, an attachment and copies."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from assistant.importing.importer import Importer
from assistant.knowledge.retrieval import Retriever
from assistant.mail.reader import QueryReader
from tests.conftest import make_email, write_mbox

TODAY = datetime(2001, 11, 20).date()


def _mail(i: int, subject: str, body: str, sender: str, to: str, when: datetime, **extra):
    headers = extra.pop("headers", {})
    msg = make_email(subject, body, sender, to, msgid=f"<m{i}@x>", when=when, **extra)
    for name, value in headers.items():
        msg[name] = value
    return msg


MAILS = [
    (
        1,
        "Board meeting agenda",
        "The board meeting moves to Thursday; agenda attached.",
        "sherri.sera@enron.com",
        "jeff.skilling@enron.com",
        datetime(2001, 11, 13, 9, tzinfo=UTC),
        {"headers": {"X-From": "Sherri Sera"}},
    ),
    (
        2,
        "Dabhol power",
        "The power situation in India is getting worse for Dabhol.",
        '"Vince Kaminski" <vince.kaminski@enron.com>',
        "jeff.skilling@enron.com",
        datetime(2001, 11, 14, 10, tzinfo=UTC),
        {},
    ),
    (
        3,
        "Re: Dabhol power",
        "Thanks Vince, send me the numbers for the board meeting.",
        "Jeff Skilling <jeff.skilling@enron.com>",
        "vince.kaminski@enron.com",
        datetime(2001, 11, 15, 8, tzinfo=UTC),
        {"in_reply_to": "<m2@x>"},
    ),
    (
        4,
        "Tickets",
        "Two tickets for the game on Friday night, board seats.",
        "sherri.sera@enron.com",
        "greg.grissom@enron.com",
        datetime(2001, 10, 5, 8, tzinfo=UTC),
        {"headers": {"X-From": "Sherri Sera", "X-To": "Greg Grissom"}},
    ),
    (
        5,
        "Annual meeting",
        "Next year's annual meeting will be in New York, with the board.",
        "president@weforum.org",
        "jeff.skilling@enron.com",
        datetime(2001, 11, 7, 8, tzinfo=UTC),
        {
            "headers": {"X-From": '"Klaus Schwab" <president@weforum.org>@ENRON'},
            "attachments": [("program.pdf", "application/pdf", b"%PDF-1.4 board")],
        },
    ),
    (
        6,
        "Budget",
        "The budget for the board retreat is in the spreadsheet.",
        "greg.whalley@enron.com",
        "jeff.skilling@enron.com",
        datetime(2001, 11, 19, 8, tzinfo=UTC),
        {},
    ),
]


@pytest.fixture
def mailbox(tmp_path: Path, store, fake_embedder):
    """The mails in folder `inbox`, and a copy of mail 1 (another Message-ID) in `sent`."""
    msgs = []
    for i, subject, body, sender, to, when, extra in MAILS:
        msgs.append(_mail(i, subject, body, sender, to, when, **extra))
    msgs[-1]["Cc"] = "Greg Grissom <greg.grissom@enron.com>"
    copy = _mail(101, *MAILS[0][1:6], **MAILS[0][6])
    importer = Importer(store, fake_embedder)
    importer.run([write_mbox(tmp_path / "inbox.mbox", msgs)])
    importer.run([write_mbox(tmp_path / "sent.mbox", [copy])])
    retriever = Retriever(store, fake_embedder, tmp_path / "index")
    return store, retriever, QueryReader(store, TODAY)


REPO_DOCS = Path(__file__).resolve().parents[3] / "docs"
