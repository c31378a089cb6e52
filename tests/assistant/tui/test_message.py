"""The whole message behind a source: headers, body, quoted tail, attachments; or the note."""

from __future__ import annotations

from assistant.importing.importer import Importer
from assistant.tui.screens.message import render_document
from tests.conftest import DATA, FakeEmbedder, make_email, write_mbox


def test_a_chunk_leads_to_its_whole_message_or_note(store, tmp_path):
    mail = make_email(
        subject="Plans",
        body="The plans are attached.\n\nOn Monday, Bram wrote:\n> Can you send the plans?",
        msgid="<p@x>",
        attachments=[("plan.pdf", "application/pdf", b"%PDF-1.4 tiny")],
    )
    notes = DATA / "notes" / "work"
    Importer(store, FakeEmbedder()).run([write_mbox(tmp_path / "b.mbox", [mail]), notes])
    kinds = dict(
        store.db.execute(
            "SELECT d.kind, min(c.id) FROM chunks c JOIN documents d "
            "ON d.id = c.document_id GROUP BY d.kind"
        ).fetchall()
    )
    doc = store.document_of_chunk(kinds["email"])
    assert doc["title"] == "Plans" and doc["body"].startswith("The plans are attached.")
    assert "Can you send the plans?" in doc["quoted"]
    (attachment,) = doc["attachments"]
    assert attachment["name"] == "plan.pdf" and attachment["content_type"] == "application/pdf"
    assert abs(attachment["size"] - 13) <= 3  # estimated from the base64 length, not decoded
    shown = render_document(doc).plain
    assert shown.startswith("Subject: Plans\nFrom: Bram de Vries <bram@example.nl>\n")
    assert f"Attachment: plan.pdf (application/pdf, {attachment['size']} bytes)" in shown
    note = store.document_of_chunk(kinds["note"])
    assert note["kind"] == "note" and note["source_path"].startswith(str(notes))
    assert render_document(note).plain.startswith(f"{note['title']}\nnote · {notes}")
    assert store.document_of_chunk(10**9) is None
