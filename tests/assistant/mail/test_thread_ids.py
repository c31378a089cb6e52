"""A thread keeps its id across imports: an older mail joining it, its named mail removed, and
two threads merged (the other id still finds the thread: `assistant thread`, `thread:`)."""

from __future__ import annotations

from assistant.cli import main
from assistant.importing.importer import Importer
from assistant.knowledge.db import open_db
from assistant.knowledge.store import KnowledgeStore
from assistant.mail.filters import thread_is
from tests.conftest import FakeEmbedder, write_mbox

from .test_threads import BRAM, MAYA, OMAR, mail, threads_of


def run(store: KnowledgeStore, box, messages) -> None:
    report = Importer(store, FakeEmbedder()).run([write_mbox(box, messages)])
    assert report.errors == [] and report.threads is not None


def thread_subjects(store: KnowledgeStore, value: str) -> set[str]:
    where, params = thread_is(value).sql()
    rows = store.db.execute(f"SELECT d.title FROM documents d WHERE {where}", params)
    return {r[0] for r in rows.fetchall()}


def test_an_older_mail_joining_a_thread_takes_the_thread_s_id(tmp_path):
    store = KnowledgeStore(open_db(tmp_path / "knowledge.db"))
    run(store, tmp_path / "a.mbox", [
        # replies to a mail not imported yet, and replies by subject to one not imported yet
        mail("Re: Plan", MAYA, BRAM, 2, "b@x", In_Reply_To="<a@x>", References="<a@x>"),
        mail("Re: Plan", BRAM, MAYA, 3, "c@x", In_Reply_To="<b@x>", References="<a@x> <b@x>"),
        mail("RE: Budget", MAYA, BRAM, 12, "2@x"),
        mail("RE: Budget", BRAM, MAYA, 13, "3@x"),
    ])  # fmt: skip
    before = threads_of(store)
    assert before["b@x"][0] == before["c@x"][0] == "b@x"
    assert before["2@x"][0] == before["3@x"][0] == "2@x"
    run(store, tmp_path / "b.mbox", [
        mail("Plan", BRAM, MAYA, 0, "a@x"),  # the mail they answer, imported later
        mail("Budget", BRAM, MAYA, 10, "1@x"),
    ])  # fmt: skip
    after = threads_of(store)
    assert after["a@x"] == after["b@x"] == after["c@x"] == ("b@x", "headers")
    assert after["1@x"] == after["2@x"] == after["3@x"] == ("2@x", "subject")


def test_merged_threads_keep_the_older_id_and_the_other_still_finds_them(tmp_path, capsys):
    home = tmp_path / "home"
    home.mkdir()
    store = KnowledgeStore(open_db(home / "knowledge.db"))
    first = [
        mail("Plan", BRAM, MAYA, 0, "p@x"),
        mail("Re: Plan", MAYA, BRAM, 1, "q@x", In_Reply_To="<p@x>", References="<p@x>"),
        mail("Budget", OMAR, MAYA, 2, "r@x"),
        mail("Re: Budget", MAYA, OMAR, 3, "s@x", In_Reply_To="<r@x>", References="<r@x>"),
    ]
    run(store, home / "box.mbox", first)
    run(store, home / "box.mbox", [first[0], first[1], first[3]])  # r@x deleted from the mbox
    assert threads_of(store)["s@x"][0] == "r@x"  # its thread is still 'r@x'
    # a mail answering both joins the two threads: 'p@x' is older and stays
    both = mail("Re: Plan and budget", MAYA, BRAM + ", " + OMAR, 4, "t@x",
                In_Reply_To="<s@x>", References="<p@x> <s@x>")  # fmt: skip
    run(store, home / "more.mbox", [both])
    got = threads_of(store)
    assert {got[m] for m in ("p@x", "q@x", "s@x", "t@x")} == {("p@x", "headers")}
    assert store.thread_key("r@x") == "p@x"  # the merged id, no mail's Message-ID now
    assert thread_subjects(store, "r@x") == thread_subjects(store, "p@x") == {
        "Plan", "Re: Plan", "Re: Budget", "Re: Plan and budget"}  # fmt: skip
    assert main(["thread", "r@x", "--home", str(home)]) == 0
    assert capsys.readouterr().out.startswith("Thread p@x · 4 mails")
