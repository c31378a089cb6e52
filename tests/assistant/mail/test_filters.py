"""Query terms and question words become SQL filters that leave only the matching mail, before
ranking (BM25 and dense both)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from assistant.importing.importer import Importer
from assistant.mail.people import People
from assistant.mail.query import QueryError, has_terms, parse
from tests.conftest import make_email, write_mbox

from .conftest import TODAY


def subjects(store, filters) -> set[str]:
    where, params = filters.sql()
    rows = store.db.execute(f"SELECT d.title FROM documents d WHERE {where}", params)
    return {r[0] for r in rows.fetchall()}


def hit_subjects(retriever, query, mode="hybrid") -> list[str]:
    return [h.record.title for h in retriever.search(query.text, 20, mode, where=query.filters)]


def test_names_are_kept_from_display_names_and_export_headers(mailbox):
    store, _, _ = mailbox
    rows = dict(store.db.execute("SELECT message_id, sender_name FROM documents").fetchall())
    assert rows["m1@x"] == "Sherri Sera"  # X-From: the From holds only an address
    assert rows["m2@x"] == "Vince Kaminski"
    assert rows["m5@x"] == "Klaus Schwab"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("from:skilling", {"Re: Dabhol power"}),
        ("from:sherri", {"Board meeting agenda", "Tickets"}),
        ('from:"Klaus Schwab"', {"Annual meeting"}),  # the name only an X-From header gives
        ("from:weforum", {"Annual meeting"}),
        ("to:greg", {"Tickets", "Budget"}),  # Greg Grissom is in Budget's Cc
        ("to:grissom", {"Tickets", "Budget"}),  # To or Cc, as notmuch's to:
        ("cc:grissom", {"Budget"}),
        ("subject:dabhol", {"Dabhol power", "Re: Dabhol power"}),
        ("subject:dab", set()),  # whole words, as thread: and notmuch's subject:
        ('subject:"meeting agenda"', {"Board meeting agenda"}),
        ("subject:et", set()),  # not 'Budget', 'Tickets' or 'meeting'
        (
            "date:2001-11-13..2001-11-15",
            {"Board meeting agenda", "Dabhol power", "Re: Dabhol power"},
        ),
        ("date:last-week", {"Board meeting agenda", "Dabhol power", "Re: Dabhol power"}),
        ("date:yesterday", {"Budget"}),
        ("date:2001-10", {"Tickets"}),
        ("thread:m2@x", {"Dabhol power", "Re: Dabhol power"}),
        ('thread:"Dabhol power"', {"Dabhol power", "Re: Dabhol power"}),
        ("thread:#2", {"Dabhol power", "Re: Dabhol power"}),  # a mail's number, as search shows
        # a subject's whole words, as notmuch's and mu's: 'dab' is in no subject as a word
        ("thread:dab", set()),
        ("thread:POWER", {"Dabhol power", "Re: Dabhol power"}),
        ('thread:"board meeting"', {"Board meeting agenda"}),
        ('thread:"meeting board"', set()),  # in their order
        ("thread:et", set()),  # not 'Budget', 'Tickets' or 'meeting'
        ("folder:sent", {"Board meeting agenda"}),
        ("maildir:sent", {"Board meeting agenda"}),  # mu's name for folder:
        ("id:m2@x", {"Dabhol power"}),  # notmuch's id:, with or without the brackets
        ("id:<m2@x>", {"Dabhol power"}),
        ("-mid:m2@x subject:dabhol", {"Re: Dabhol power"}),
        ("has:attachment", {"Annual meeting"}),
        ('"power situation"', {"Dabhol power"}),
        ("from:sherri -subject:tickets", {"Board meeting agenda"}),
        ("subject:dabhol -from:skilling", {"Dabhol power"}),
        (
            "board -thursday -tickets date:2001-11",
            {"Dabhol power", "Re: Dabhol power", "Annual meeting", "Budget"},
        ),
        ("from:nobody-at-all", set()),
    ],
)
def test_each_term_leaves_only_matching_mail(mailbox, text, expected):
    store, retriever, _ = mailbox
    query = parse(text, TODAY, mailbox[2].people())
    assert subjects(store, query.filters) == expected
    for mode in ("hybrid", "bm25", "dense"):
        assert set(hit_subjects(retriever, query, mode)) <= expected


def test_terms_leave_the_words_to_rank_by(mailbox):
    query = parse(
        'from:sherri date:2001 "board meeting" -tickets agenda', TODAY, mailbox[2].people()
    )
    assert query.text == "board meeting agenda"
    assert query.filters.describe() == (
        'from: sherri · date: 2001-01-01..2001-12-31 · text: "board meeting" · -text: "tickets"'
    )


def test_a_filtered_search_ranks_only_inside_the_filter(mailbox):
    store, retriever, reader = mailbox
    everything = retriever.search("board", 20)
    assert {"Tickets", "Budget"} <= {h.record.title for h in everything}
    query = reader.read("board from:sherri")
    assert {h.record.title for h in retriever.search(query.text, 20, where=query.filters)} == {
        "Board meeting agenda",
        "Tickets",
    }


def test_terms_alone_list_the_newest_mail_first(mailbox):
    _, retriever, reader = mailbox
    query = reader.read("from:sherri")
    assert query.text == ""
    titles = [h.record.title for h in retriever.search("", 5, where=query.filters)]
    assert titles[0] == "Board meeting agenda" and titles[-1] == "Tickets"


def test_words_no_mail_of_the_filter_has_list_its_newest_mail(mailbox):
    _, retriever, reader = mailbox
    query = reader.read("zebra from:sherri")  # no mail has "zebra": the filter still shows its
    titles = [h.record.title for h in retriever.search(query.text, 5, "bm25", where=query.filters)]
    assert titles[0] == "Board meeting agenda" and titles[-1] == "Tickets"
    assert retriever.search(query.text, 5, "bm25") == []  # without the filter: nothing matches


@pytest.mark.parametrize(
    ("text", "query"),
    [('"board meeting" -lunch', True), ("-lunch", True), ('"board meeting"', True),
     ('-"dabhol power"', True), ('What was said at the "board meeting"?', False),
     ("What is the re-org about?", False), ("e-mail at -5 degrees", False)],
)  # fmt: skip
def test_an_exclusion_or_phrases_alone_are_read_as_a_query(text, query):
    """`-lunch` and a phrase alone are terms (search.md): read as words, `-lunch` ranked mail
    about lunch higher; a question that quotes a phrase among its words stays a question."""
    assert has_terms(text) is query


def test_an_unclosed_quote_is_an_error_not_a_value_that_swallows_the_rest():
    with pytest.raises(QueryError, match="the quote is not closed"):
        parse('subject:"board meeting date:2001 budget', TODAY, People([]))


@pytest.mark.parametrize(
    "text, says",
    [
        ("is:unread budget", "no flags are imported"),
        ("tag:inbox", "no tags are imported"),
        ("-flag:flagged power", "no flags are imported"),
        ("attachment:report.pdf", "has:attachment"),
        ("mime:application/pdf", "has:attachment"),
    ],
)
def test_a_term_of_what_a_mail_client_keeps_is_an_error_not_a_word(text, says):
    """is:unread was searched as the word 'is:unread' (mail saying 'unread' ranked first) while
    has:pdf was an error: notmuch's and mu's terms for tags and flags now say they are not kept."""
    assert has_terms(text)
    with pytest.raises(QueryError, match=says):
        parse(text, TODAY, People([]))


def test_a_body_term_ranks_by_its_words():
    query = parse("body:kitchen -body:tiles from:bram", TODAY, People([]))
    assert query.text == "kitchen"
    assert [(c.field, c.negated) for c in query.filters.conditions] == [
        ("text", True),
        ("from", False),
    ]


def test_an_unknown_has_term_is_an_error():
    with pytest.raises(QueryError, match="has:attachment"):
        parse("has:stars", TODAY, None)


@pytest.mark.parametrize("exact_max", [2_000, 0])  # a small filtered set scored exactly, or not
def test_a_large_home_filters_too(mailbox, tmp_path, monkeypatch, exact_max):
    from assistant.config_sections import RetrievalSettings
    from assistant.knowledge import retrieval
    from assistant.knowledge.retrieval import Retriever

    store, small, reader = mailbox
    monkeypatch.setattr(retrieval, "EXACT_SUBSET_MAX", exact_max)
    large = Retriever(
        store,
        small.embedder,
        tmp_path / "large-index",
        RetrievalSettings(large_min_chunks=1, candidates=20),
    )
    for text, expected in [
        ("board from:sherri", {"Board meeting agenda", "Tickets"}),
        ("power date:2001-11", {"Dabhol power", "Re: Dabhol power"}),
    ]:
        query = reader.read(text)
        for mode in ("hybrid", "bm25", "dense"):
            titles = [
                h.record.title for h in large.search(query.text, 10, mode, where=query.filters)
            ]
            assert titles and set(titles) <= subjects(store, query.filters)
        bm25 = {h.record.title for h in large.search(query.text, 10, "bm25", where=query.filters)}
        assert bm25 == expected


def test_a_filter_no_chunk_meets_ranks_nothing(mailbox):
    _, retriever, reader = mailbox
    query = reader.read("board from:nobody-at-all")
    for mode in ("hybrid", "bm25", "dense"):
        assert retriever.search(query.text, 10, mode, where=query.filters) == []


def test_a_condition_that_ranks_lifts_its_mail_and_drops_none(mailbox):
    from assistant.knowledge.retrieval import PREFERRED_BONUS
    from assistant.mail import filters as f
    from assistant.mail.filters import Filters

    _, retriever, _ = mailbox
    ranked = f.words_in("from", ["d.sender"], ["greg.whalley"], "Greg").ranking("2 people")
    where = Filters((), "words", (ranked,))
    plain = {h.record.title: h.score for h in retriever.search("board", 20)}
    lifted = {h.record.title: h.score for h in retriever.search("board", 20, where=where)}
    assert lifted.keys() == plain.keys()  # nothing is left out
    assert lifted["Budget"] == pytest.approx(plain["Budget"] + PREFERRED_BONUS)
    assert all(lifted[t] == pytest.approx(plain[t]) for t in plain if t != "Budget")
    assert where.describe() == "from: Greg (2 people: ranks, does not filter)"


def test_what_i_told_someone_includes_their_reply_quoting_it(tmp_path, store, fake_embedder):
    """Asked "What did I tell Vince …": mail to him, and his replies that quote it (a mailbox often
    keeps the reply and not the sent mail), the mail to him ranked first; his other mail is
    not his to answer. A typed `to:` stays the header's."""
    from datetime import UTC, datetime

    from assistant.importing.importer import Importer
    from assistant.mail.reader import QueryReader
    from tests.conftest import make_email, write_mbox

    jeff, vince = "Jeff Skilling <jeff.skilling@enron.com>", "Vince Kaminski <vince@enron.com>"
    when = datetime(2001, 11, 14, 10, tzinfo=UTC)
    sent = make_email("Dabhol numbers", "Send me the Dabhol numbers by Friday.", jeff,
                      vince, msgid="<a@x>", when=when)  # fmt: skip
    reply = make_email("Re: Dabhol numbers", "Will do.\n\n> Send me the Dabhol numbers by "
                       "Friday.", vince, jeff, msgid="<b@x>", when=when,
                       in_reply_to="<a@x>")  # fmt: skip
    other = make_email("Lunch", "Lunch on Monday about Dabhol?", vince, jeff, msgid="<c@x>",
                       when=when)  # fmt: skip
    mine = [
        make_email(
            f"Note {i}", "Thanks.", jeff, "sherri.sera@enron.com", msgid=f"<n{i}@x>", when=when
        )
        for i in range(2)
    ]  # fmt: skip  (Jeff's is the mailbox)
    box = write_mbox(tmp_path / "box.mbox", [sent, reply, other, *mine])
    Importer(store, fake_embedder).run([box])
    reader = QueryReader(store, TODAY, "words")
    told = reader.read("What did I tell Vince about the Dabhol numbers?").filters
    assert [c.field for c in told.conditions] == ["to"], told.describe()
    assert subjects(store, told) == {"Dabhol numbers", "Re: Dabhol numbers"}
    first_sql, first_params = told.conditions[0].first
    rows = store.db.execute(f"SELECT d.title FROM documents d WHERE {first_sql}", first_params)
    assert {r[0] for r in rows} == {"Dabhol numbers"}
    typed = reader.read("to:vince dabhol").filters
    assert subjects(store, typed) == {"Dabhol numbers"}


def test_a_word_with_letters_beyond_ascii_matches_in_any_case(tmp_path, store, fake_embedder):
    """SQLite's LIKE ignores the case of ASCII letters only: a phrase or a name with others
    ("åsa sjöberg") missed the mail that writes it "Åsa Sjöberg" or "ÅSA SJÖBERG"."""
    from assistant.importing.importer import Importer
    from assistant.mail import filters as f
    from tests.conftest import make_email, write_mbox

    bodies = {"Signed": "Thanks, Åsa Sjöberg", "Shouted": "FROM THE DESK OF ÅSA SJÖBERG",
              "Plain": "asa sjoberg, without her letters", "Other": "Nothing of hers."}  # fmt: skip
    mails = [make_email(subject=s, body=b, msgid=f"<{s}@x>") for s, b in bodies.items()]
    Importer(store, fake_embedder).run([write_mbox(tmp_path / "a.mbox", mails)], embed=False)
    for word in ("åsa sjöberg", "Åsa Sjöberg"):
        where, params = f.words_in("text", ["d.body"], [word], word).sql()
        rows = store.db.execute(f"SELECT d.title FROM documents d WHERE {where}", params)
        assert {r[0] for r in rows} == {"Signed", "Shouted"}


def test_a_filter_no_index_serves_is_tested_once_a_mail_not_once_a_chunk(mailbox):
    """A name in the mail's text (a LIKE over every body) is read once per mail: the chunks
    of the mails it leaves come by their document's index."""
    store, _, _ = mailbox
    tested: list[int] = []
    store.db.conn.create_function("tested", 1, lambda doc: tested.append(doc) or 1)
    ids = store.mail.chunk_ids("tested(d.id) AND d.body LIKE ?", ["%board%"])
    documents = store.db.execute("SELECT count(*) FROM documents").fetchone()[0]
    assert sorted(tested) == sorted(set(tested)) and len(tested) == documents
    expected = store.db.execute(
        "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id "
        "WHERE d.body LIKE ? ORDER BY c.id",
        ["%board%"],
    ).fetchall()
    assert ids.tolist() == [r[0] for r in expected] and len(ids)


def test_a_question_counts_its_filters_once_per_version_of_the_mail(mailbox, tmp_path):
    """The filters are counted when read and again when shown: one count in SQL, until the
    mail changes."""
    store, _, reader = mailbox
    counted: list[str] = []
    real = store.mail.count
    store.mail.count = lambda sql, params: counted.append(sql) or real(sql, params)
    query = reader.read("what did Vince say about Dabhol?")
    assert query.filters.narrows()
    first = reader.count(query.filters)
    assert reader.count(query.filters) == first and len(counted) == len(set(counted))
    new = make_email("Dabhol", "More.", '"Vince Kaminski" <vince.kaminski@enron.com>', "j@x.com",
                     msgid="<m200@x>", when=datetime(2001, 11, 16, tzinfo=UTC))  # fmt: skip
    Importer(store, None).run([write_mbox(tmp_path / "more.mbox", [new])], embed=False)
    assert reader.count(query.filters) == first + 1
