"""The list/bulk mark of a mail's headers is kept in its row; a home from before the mark was
read gets it on re-import, and the re-import adds nothing."""

from __future__ import annotations

from sqlite_utils import Database

from assistant.ingest.chunking import chunk_document
from assistant.ingest.emails import parse_email
from assistant.knowledge.db import MIGRATIONS, open_db
from assistant.knowledge.store import KnowledgeStore
from cache.db import apply_migrations, connect
from tests.conftest import make_email


def _newsletter():
    msg = make_email(subject="This week", msgid="<n1@list.example.org>")
    msg["List-Id"] = "<news.list.example.org>"
    return parse_email(msg.as_bytes(), "box.mbox")


def test_the_mark_is_stored_and_read_with_the_headers():
    store = KnowledgeStore(open_db(None))
    doc = _newsletter()
    store.upsert(doc, chunk_document(doc))
    personal = parse_email(make_email(msgid="<p1@example.nl>").as_bytes(), "box.mbox")
    store.upsert(personal, chunk_document(personal))
    assert [h.bulk for h in store.mail_headers()] == ["list", ""]


def test_a_home_from_before_the_mark_gets_it_on_reimport(tmp_path):
    path = tmp_path / "knowledge.db"
    old = Database(connect(path))
    apply_migrations(old, [m for m in MIGRATIONS if m[0] != "0008_bulk_mark"])
    old["documents"].insert({
        "kind": "email", "source_key": (doc := _newsletter()).source_key,
        "message_id": doc.message_id, "title": doc.title, "content_hash": doc.content_hash,
        "imported_at": "2026-03-02T10:00:00+00:00",
    })  # fmt: skip
    old.conn.close()
    store = KnowledgeStore(open_db(path))  # applies 0008: the mark is not known yet
    assert store.db.execute("SELECT bulk FROM documents").fetchone()[0] is None
    outcome, _ = store.upsert(doc, chunk_document(doc))
    assert outcome == "duplicate"
    assert [h.bulk for h in store.mail_headers()] == ["list"]
    assert store.db.execute("SELECT count(*) FROM documents").fetchone()[0] == 1
