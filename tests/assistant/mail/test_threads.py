"""Threads from reply headers and, for mail without them, from subject, participants and time;
a chunk that only repeats an earlier mail of its thread is not indexed; `assistant thread`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from assistant.cli import main
from assistant.importing.importer import Importer
from assistant.knowledge.db import MIGRATIONS, open_db
from assistant.knowledge.store import KnowledgeStore
from assistant.mail import thread_update, threads
from assistant.mail.thread_update import rebuild
from assistant.mail.threads import normalize_subject
from cache.db import apply_migrations
from tests.conftest import FakeEmbedder, make_email, write_mbox

DAY = datetime(2001, 10, 1, 9, 0, tzinfo=UTC)
BRAM, MAYA, OMAR = "Bram <bram@x.nl>", "Maya <maya@x.nl>", "Omar <omar@y.com>"
ORIGINAL = "\n".join(
    f"Line {i} of the quarterly budget plan for the warehouse in Rotterdam, item {i}."
    for i in range(40)
)


def mail(subject, sender, to, day, msgid, body="A short note.", **headers):
    msg = make_email(subject, body, sender, to, f"<{msgid}>", DAY + timedelta(days=day))
    for name, value in headers.items():
        msg[name.replace("_", "-")] = value
    return msg


def imported(tmp_path, messages) -> KnowledgeStore:
    store = KnowledgeStore(open_db(tmp_path / "knowledge.db"))
    report = Importer(store, FakeEmbedder()).run([write_mbox(tmp_path / "box.mbox", messages)])
    assert report.errors == [] and report.threads is not None
    return store


def threads_of(store: KnowledgeStore) -> dict[str, tuple[str, str | None]]:
    rows = store.db.execute("SELECT message_id, thread_id, thread_by FROM documents")
    return {mid: (tid, by) for mid, tid, by in rows.fetchall()}


def test_subjects_lose_reply_and_forward_prefixes_and_list_tags():
    assert normalize_subject("RE: [smu-betas] Fwd: President  Bush") == ("president bush", True)
    assert normalize_subject("AW: Re[2]: Hallo") == ("hallo", True)
    assert normalize_subject("[list] Budget") == ("budget", False)
    assert normalize_subject("Re: (no subject)") == ("", True)


@pytest.mark.parametrize("subject", [
    "Réf : Budget", "RV: Budget", "RES: Budget", "ENC: Budget", "Odp: Budget", "PD: Budget",
    "YNT: Budget", "VL: Budget", "Antwort: Budget", "Doorst: Budget", "Vá: Budget",
    "Отв: Budget", "ΑΠ: Budget", "回复：Budget", "答复: Budget", "转发: Budget", "返信: Budget",
    "RE：Budget", "Re: 回覆: Budget",
])  # fmt: skip
def test_localized_reply_and_forward_prefixes_mark_a_reply(subject):
    assert normalize_subject(subject) == ("budget", True)


def test_a_localized_reply_joins_its_thread_by_subject(tmp_path):
    store = imported(tmp_path, [
        mail("Budget", BRAM, MAYA, 0, "1@x"),
        mail("Réf : Budget", MAYA, BRAM, 1, "2@x"),  # French Lotus Notes
        mail("RV: Budget", BRAM, OMAR + ", " + MAYA, 2, "3@x"),  # Spanish Outlook
        mail("回复：Budget", OMAR, BRAM, 3, "4@x"),  # Chinese clients, a full-width colon
    ])  # fmt: skip
    assert set(threads_of(store).values()) == {("1@x", "subject")}


def test_reply_headers_make_one_thread_whatever_the_subjects(tmp_path):
    store = imported(tmp_path, [
        mail("Plan", BRAM, MAYA, 0, "a@x"),
        mail("Other words", MAYA, BRAM, 1, "b@x", In_Reply_To="<a@x>", References="<a@x>"),
        mail("Yet other", BRAM, MAYA, 2, "c@x", In_Reply_To="<b@x>", References="<a@x> <b@x>"),
        # two replies to a parent that is not in the home still share a thread
        mail("Re: Lost", OMAR, MAYA, 3, "d@x", In_Reply_To="<gone@x>"),
        mail("Re: Lost", MAYA, OMAR, 4, "e@x", In_Reply_To="<gone@x>"),
        mail("Plan", BRAM, MAYA, 5, "f@x"),
    ])  # fmt: skip
    got = threads_of(store)
    assert got["a@x"] == got["b@x"] == got["c@x"] == ("a@x", "headers")
    assert got["d@x"] == got["e@x"] == ("d@x", "headers")
    assert got["f@x"] == ("f@x", None)
    row = store.db.execute("SELECT in_reply_to, refs FROM documents WHERE message_id = 'c@x'")
    assert row.fetchone() == ("b@x", "a@x b@x")


def test_without_headers_a_reply_joins_by_subject_participants_and_window(tmp_path):
    store = imported(tmp_path, [
        mail("Budget", BRAM, MAYA, 0, "1@x"),
        mail("RE: Budget", MAYA, BRAM, 3, "2@x"),
        mail("Fw: budget", MAYA, OMAR + ", " + BRAM, 20, "3@x"),
        mail("Re: Budget", OMAR, "Zoe <zoe@z.org>", 21, "4@x"),  # 3@x had Omar: joins
        mail("Re: Budget", "Ann <ann@q.org>", "Lee <lee@q.org>", 22, "5@x"),  # nobody shared
        mail("Re: Budget", BRAM, MAYA, 60, "6@x"),  # 39 days after the thread's last mail
        mail("Budget", BRAM, MAYA, 23, "7@x"),  # not a reply: a thread of its own
    ])  # fmt: skip
    got = threads_of(store)
    first = ("1@x", "subject")
    assert got["1@x"] == got["2@x"] == got["3@x"] == got["4@x"] == first
    assert got["5@x"] == ("5@x", None)
    assert got["6@x"][0] != "1@x" and got["7@x"] == ("7@x", None)
    report = rebuild(store)
    assert (report.threads, report.by_headers, report.by_subject) == (1, 0, 1)
    assert report.changed == 0  # the import computed them already


def test_a_reply_whose_headers_name_a_stored_mail_is_not_joined_by_its_subject(tmp_path):
    store = imported(tmp_path, [
        mail("Plan", BRAM, MAYA, 0, "a@x"),
        mail("Plan", BRAM, MAYA, 10, "c@x"),  # another plan, another conversation
        # a late answer to the first: its headers say where it goes, its subject is c@x's too
        mail("Re: Plan", MAYA, BRAM, 11, "b@x", In_Reply_To="<a@x>", References="<a@x>"),
        # a reply without headers still joins by subject (the latest thread opened: c@x)
        mail("RE: Plan", MAYA, BRAM, 12, "d@x"),
        # a reply whose parent is not in the home may still join by its subject
        mail("Lost", OMAR, MAYA, 20, "l@x"),
        mail("Re: Lost", MAYA, OMAR, 21, "m@x", In_Reply_To="<gone@x>"),
    ])  # fmt: skip
    got = threads_of(store)
    assert got["a@x"] == got["b@x"] == ("a@x", "headers")
    assert got["c@x"] == got["d@x"] == ("c@x", "subject")
    assert got["l@x"][0] == got["m@x"][0] == "l@x"


def test_a_subject_reply_is_matched_against_the_threads_still_open_only(monkeypatch):
    """A daily 'Status' and a reply from others each day for years: a reply is compared with
    the threads of the last WINDOW, not with every 'Status' ever (once 60 s on 100k mails)."""
    from assistant.knowledge.thread_rows import MailHeaders

    compared = []  # how many open threads each reply is compared with
    match = threads._match
    monkeypatch.setattr(threads, "_match", lambda c, *a: compared.append(len(c)) or match(c, *a))
    days = 1000
    mails = [
        MailHeaders(i, f"{i}@x", "", (), "Re: Status" if i % 2 else "Status", f"s{i}@x.nl",
                    f"t{i}@x.nl", "", (DAY + timedelta(days=i // 2)).isoformat())
        for i in range(2 * days)
    ]  # fmt: skip
    got = threads.assign(mails).threads
    assert {by for _, by in got.values()} == {None}  # nobody shared: nothing joined
    assert len(compared) == days and max(compared) <= 2 * 31  # WINDOW's days, not all of them


def test_with_drop_repeats_a_chunk_that_repeats_an_earlier_mail_is_not_indexed(tmp_path):
    reply = "Agreed, go ahead with it.\n\nBram Jansen\n10/02/2001 09:00 AM\nTo: Maya\n\n" + ORIGINAL
    store = imported(tmp_path, [
        mail("Budget plan", BRAM, MAYA, 0, "o@x", ORIGINAL),
        mail("Re: Budget plan", MAYA, BRAM, 1, "r@x", reply),
        mail("Other plan", MAYA, BRAM, 1, "u@x", ORIGINAL),  # another thread: kept
    ])  # fmt: skip
    assert not thread_update.DROP_REPEATS  # off by default (thread_update.py says why)
    assert rebuild(store, drop_repeats=True).chunks_dropped >= 1
    chunks = dict(store.db.execute(
        "SELECT d.message_id, count(c.id) FROM documents d LEFT JOIN chunks c "
        "ON c.document_id = d.id GROUP BY d.id"
    ).fetchall())  # fmt: skip
    assert chunks["o@x"] == chunks["u@x"] >= 2
    assert chunks["r@x"] == 1  # its own words (and the start of the quote) only
    body = store.db.execute("SELECT body FROM documents WHERE message_id = 'r@x'").fetchone()[0]
    assert ORIGINAL in body  # the whole text is kept
    assert rebuild(store, drop_repeats=True).chunks_dropped == 0  # once only


def test_an_existing_home_keeps_its_header_links_and_gets_threads_on_open(tmp_path):
    from sqlite_utils import Database

    from cache.db import connect

    path = tmp_path / "knowledge.db"
    old = Database(connect(path))
    apply_migrations(old, MIGRATIONS[:2])  # a home from before threads
    for doc_id, (mid, thread) in enumerate([("p@x", "p@x"), ("q@x", "p@x")], 1):
        old["documents"].insert({
            "id": doc_id, "kind": "email", "source_key": mid, "message_id": mid,
            "thread_id": thread, "title": f"Subject {mid}", "date": DAY.isoformat(),
            "content_hash": mid, "imported_at": DAY.isoformat(),
        })  # fmt: skip
    old.conn.close()
    store = KnowledgeStore(open_db(path))  # applies 0003_thread_headers
    assert store.threads_due(threads.RULES)
    assert rebuild(store).by_headers == 1
    assert threads_of(store) == {"p@x": ("p@x", "headers"), "q@x": ("p@x", "headers")}
    assert not store.threads_due(threads.RULES)


def test_thread_prints_one_line_per_mail_then_new_text_with_quotes_folded(tmp_path, capsys):
    home = tmp_path / "home"
    home.mkdir()
    reply = "Agreed, go ahead with it.\n\n" + ORIGINAL
    imported(home, [
        mail("Budget plan", BRAM, MAYA, 0, "o@x", ORIGINAL),
        mail("Re: Budget plan", MAYA, BRAM, 1, "r@x", reply),
    ])  # fmt: skip
    assert main(["thread", "r@x", "--home", str(home)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Thread o@x · 2 mails"
    assert out[1].split() == "1. Bram · 2001-10-01 · Budget plan".split()
    assert out[2].split() == "2. Maya · 2001-10-02 · Re: Budget plan".split()
    text = "\n".join(out)
    assert text.count("Line 7 of the quarterly budget") == 1  # the original's, not the reply's
    assert "Agreed, go ahead with it." in text
    assert "[… 40 lines quoted from an earlier mail of this thread]" in text


def test_thread_folds_quotes_of_mail_without_message_id_and_shows_copies_once(tmp_path, capsys):
    home = tmp_path / "home"
    home.mkdir()
    reply = "Agreed, go ahead with it.\n\n" + ORIGINAL
    bare = [mail("Plan B", BRAM, MAYA, 0, "n1@x", ORIGINAL), mail("Re: Plan B", MAYA, BRAM, 1,
            "n2@x", reply)]  # fmt: skip
    for msg in bare:  # an export without Message-IDs: threaded by subject
        del msg["Message-ID"]
    store = imported(home, [
        mail("Budget plan", BRAM, MAYA, 0, "o@x", ORIGINAL),
        mail("Re: Budget plan", MAYA, BRAM, 1, "r@x", reply), *bare,
        mail("Lunch", BRAM, MAYA, 2, "l@x"),
    ])  # fmt: skip
    # the list's copies of o@x and l@x (its tag and footer) are kept beside those sent
    inbox = write_mbox(home / "inbox.mbox", [
        mail("[team] Budget plan", BRAM, MAYA, 0, "o@x", ORIGINAL + "\n--\nteam list"),
        mail("[team] Lunch", BRAM, MAYA, 2, "l@x", "A short note.\n--\nteam list"),
    ])  # fmt: skip
    Importer(store, FakeEmbedder()).run([inbox])
    assert rebuild(store).threads == 2  # copies of one mail are not a thread of two
    assert main(["thread", "r@x", "--home", str(home)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Thread o@x · 2 mails"
    assert out[1].split() == "1. Bram · 2001-10-01 · Budget plan (2 copies)".split()
    assert out[2].split()[-3:] == "Re: Budget plan".split()
    assert "team list" not in "\n".join(out)  # the first copy stored is shown
    doc = store.db.execute("SELECT id FROM documents WHERE title = 'Re: Plan B'").fetchone()[0]
    assert main(["thread", f"#{doc}", "--home", str(home)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("Thread doc") and "2 mails" in text
    assert text.count("Line 7 of the quarterly budget") == 1
    assert "[… 40 lines quoted from an earlier mail of this thread]" in text


def test_thread_of_an_unknown_id_says_what_to_give(tmp_path, capsys):
    assert main(["thread", "nope@x", "--home", str(tmp_path / "h")]) == 1
    assert "No mail or thread 'nope@x'" in capsys.readouterr().err


def test_sources_name_their_thread_and_threads_rebuild_reports(tmp_path, capsys):
    home = tmp_path / "home"
    home.mkdir()
    store = imported(home, [
        mail("Budget", BRAM, MAYA, 0, "1@x"),
        mail("RE: Budget", MAYA, BRAM, 3, "2@x"),
    ])  # fmt: skip
    refs = [r.ref() for r in store.chunk_records(store.chunk_ids())]
    assert [(r["message_id"], r["thread"]) for r in refs] == [("1@x", "1@x"), ("2@x", "1@x")]
    assert main(["threads", "--rebuild", "--home", str(home)]) == 0
    err = capsys.readouterr().err
    assert "Threads: 1 of two mails or more (0 from reply headers, 1 from the subject)" in err


def test_importing_again_fills_the_reply_headers_an_older_import_did_not_keep(tmp_path):
    box = write_mbox(tmp_path / "box.mbox", [
        mail("Plan", BRAM, MAYA, 0, "a@x"),
        mail("Other words", MAYA, BRAM, 1, "b@x", In_Reply_To="<a@x>"),
    ])  # fmt: skip
    store = KnowledgeStore(open_db(tmp_path / "knowledge.db"))
    Importer(store, FakeEmbedder()).run([box])
    store.db.execute("UPDATE documents SET in_reply_to = NULL, refs = NULL, thread_id = message_id")
    store.db.execute("DELETE FROM sources")  # nor were its sources remembered then
    rebuild(store)  # as a home from before reply headers were kept
    assert threads_of(store)["b@x"] == ("b@x", None)
    report = Importer(store, FakeEmbedder()).run([box])
    assert report.duplicates == 2 and report.threads is not None
    assert threads_of(store)["b@x"] == ("a@x", "headers")
