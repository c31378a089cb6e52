"""A search result is a mail: a mail's chunks and its copies in other folders are one row."""

from __future__ import annotations

from assistant.knowledge.retrieval import Hit
from assistant.mail.rows import best_line, mail_rows, normalized_subject


def test_copies_in_two_folders_are_one_row_listing_both(mailbox):
    store, retriever, reader = mailbox
    query = reader.read("board meeting agenda thursday")
    hits = retriever.search(query.text, 20)
    refs = store.mail.refs([h.chunk_id for h in hits])
    assert sum(r.title == "Board meeting agenda" for r in refs.values()) == 2  # both copies hit
    keys = [r.copy_key for r in refs.values()]
    rows = mail_rows(hits, refs, query.text, 10, store.mail.folders(keys))
    assert [r.subject for r in rows].count("Board meeting agenda") == 1
    row = next(r for r in rows if r.subject == "Board meeting agenda")
    assert row.rank == 1 and row.folders == ["inbox", "sent"] and row.copies == 2
    assert row.sender == "Sherri Sera" and row.date == "2001-11-13"
    assert "Thursday" in row.line
    assert len({(r.sender, r.date, r.subject) for r in rows}) == len(rows)


def test_rows_stop_at_k_mails_and_keep_rank_order(mailbox):
    store, retriever, _ = mailbox
    hits = retriever.search("board", 20)
    rows = mail_rows(hits, store.mail.refs([h.chunk_id for h in hits]), "board", 3)
    assert [r.rank for r in rows] == [1, 2, 3]
    firsts = []
    for h in hits:
        doc = store.mail.refs([h.chunk_id])[h.chunk_id].document_id
        if doc not in firsts:
            firsts.append(doc)
    assert rows[0].document_id == firsts[0]


def test_best_line_holds_most_query_words():
    text = "From: A | Date: 2001-11-13 | Subject: S\nHello Jeff,\nThe board meets Thursday.\nBye"
    assert best_line(text, "when does the board meet thursday") == "The board meets Thursday."
    assert best_line(text, "") == "Hello Jeff,"


def test_normalized_subject_drops_reply_and_list_prefixes():
    assert normalized_subject("RE: Fwd: [smu-betas]  Grumbles") == "grumbles"


def test_show_finds_a_mail_by_number_or_message_id(mailbox):
    store, _, _ = mailbox
    mail = store.mail.mail("<m5@x>")
    assert mail["sender_name"] == "Klaus Schwab" and mail["attachments"][0]["name"] == "program.pdf"
    assert store.mail.mail(str(mail["id"]))["message_id"] == "m5@x"
    assert store.mail.mail("no-such-id") is None


def test_unknown_chunks_make_no_row():
    assert mail_rows([Hit(99, 1.0, None, None, None)], {}, "x", 5) == []


def test_a_copy_whose_folder_shifted_its_date_and_sender_is_one_row(tmp_path, store, fake_embedder):
    from datetime import UTC, datetime

    from assistant.importing.importer import Importer
    from assistant.knowledge.retrieval import Retriever
    from tests.conftest import make_email, write_mbox

    text = (
        "Sam, Jeff said he would be happy to talk with you about the MS150 ride in LaGrange. " * 5
    )
    a = make_email(
        "Re: MS150 interview",
        text,
        "sherri.sera@enron.com",
        msgid="<a@x>",
        when=datetime(2001, 4, 20, 4, 52, tzinfo=UTC),
    )
    b = make_email(
        "Re: MS150 interview",
        text + "\n\nEmbedded StdOleLink",
        "jeff.skilling@enron.com",
        msgid="<b@x>",
        when=datetime(2001, 4, 20, 14, 52, tzinfo=UTC),
    )
    other = make_email("Re: MS150 interview", "Thanks!", "sherri.sera@enron.com", msgid="<c@x>")
    again = make_email(
        "Re: MS150 interview",
        "Thanks!",
        "sherri.sera@enron.com",
        msgid="<d@x>",
        when=datetime(2001, 4, 21, 9, tzinfo=UTC),
    )
    filler = [make_email(f"N{i}", f"filler {i}", msgid=f"<f{i}@x>") for i in range(4)]
    Importer(store, fake_embedder).run(
        [write_mbox(tmp_path / "b.mbox", [a, b, other, again, *filler])]
    )
    hits = Retriever(store, fake_embedder, None).search("MS150 interview LaGrange thanks", 20)
    rows = mail_rows(hits, store.mail.refs([h.chunk_id for h in hits]), "MS150", 10)
    ms150 = [r for r in rows if r.subject == "Re: MS150 interview"]
    # the two copies (their first 300 characters of words alike) are one row; two short
    # "Thanks!" mails stay two
    assert len(ms150) == 3
    assert max(r.copies for r in ms150) == 2
