"""The night covers the most recently active threads first: an old thread with a reply this
week comes before last month's single mail, and undated text comes last."""

from __future__ import annotations

from datetime import UTC, datetime

from assistant.importer import Importer
from assistant.knowledge.db import open_db
from assistant.knowledge.store import KnowledgeStore
from tests.conftest import make_email, write_mbox


def test_recent_chunk_ids_put_the_liveliest_thread_first(tmp_path, fake_embedder):
    store = KnowledgeStore(open_db(None))
    mails = [
        make_email(subject="Budget", body="The budget is 40k for the year.", msgid="<a@x>",
                   when=datetime(2001, 10, 1, 9, tzinfo=UTC)),
        make_email(subject="Offsite", body="The offsite is in Utrecht on the 20th.",
                   msgid="<b@x>", when=datetime(2001, 11, 5, 9, tzinfo=UTC)),
        make_email(subject="Re: Budget", body="Agreed, 40k it is, sign it today.",
                   msgid="<c@x>", when=datetime(2001, 11, 20, 9, tzinfo=UTC),
                   in_reply_to="<a@x>"),
    ]  # fmt: skip
    Importer(store, fake_embedder).run([write_mbox(tmp_path / "box.mbox", mails)])
    order = [store.document_of_chunk(i)["message_id"] for i, _ in store.mail.recent_chunk_ids()]
    firsts = list(dict.fromkeys(order))
    assert firsts == ["c@x", "a@x", "b@x"]  # the budget thread is live: both its mails first
