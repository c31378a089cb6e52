"""After an import, threads are computed again only where mail changed, and come out as
computing every thread would: over random imports (older and newer mail, replies before their
parent, mail without Message-ID or date), removals and changed headers."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from assistant.importing.importer import Importer
from assistant.knowledge.db import open_db
from assistant.knowledge.store import KnowledgeStore
from assistant.mail import thread_update, threads
from assistant.mail.threads import normalize_subject
from tests.conftest import FakeEmbedder, write_mbox

from .test_threads import mail

ME = "Me <me@home.nl>"
PEOPLE = [f"P{i} <p{i}@x{i % 3}.org>" for i in range(40)]
SUBJECTS = ["Budget", "Plan", "Status", "Lunch", "Offsite trip", ""] + [
    f"Topic {i}" for i in range(40)
]


def random_mail(rng: random.Random, n: int, known: list[tuple[str, str]]):
    """Mail `n`: a subject (a reply's prefix or not), the owner and one or two others, a day in
    four months, maybe reply headers naming an earlier or an unknown mail (most of them under
    its subject), maybe no Message-ID or date."""
    subject = rng.choice(SUBJECTS)
    others = rng.sample(PEOPLE[: rng.choice([4, 40])], rng.choice([1, 2]))
    sender, to = (ME, ", ".join(others)) if rng.random() < 0.4 else (others[0], ME)
    headers = {}
    if known and rng.random() < 0.35:
        parent, subject = rng.choice(known + [(f"gone{rng.randrange(5)}@x", subject)])
        headers = {"In_Reply_To": f"<{parent}>", "References": f"<{parent}>"}
        subject = subject if rng.random() < 0.9 else rng.choice(SUBJECTS)
    if subject and rng.random() < 0.6:
        subject = rng.choice(["Re: ", "RE: ", "Fwd: ", "AW: "]) + subject
    msg = mail(subject, sender, to, rng.randrange(120), f"m{n}@x", f"Mail number {n}.", **headers)
    if rng.random() < 0.1:
        del msg["Message-ID"]
    else:
        known.append((f"m{n}@x", normalize_subject(subject)[0]))
    if rng.random() < 0.05:
        del msg["Date"]
    return msg


def partition(store: KnowledgeStore) -> set[frozenset[int]]:
    rows = store.db.execute("SELECT id, thread_id FROM documents WHERE kind = 'email'")
    groups: dict[str, set[int]] = {}
    for doc_id, thread_id in rows.fetchall():
        groups.setdefault(thread_id, set()).add(doc_id)
    return {frozenset(g) for g in groups.values()}


def from_scratch(store: KnowledgeStore) -> set[frozenset[int]]:
    """The threads of every mail computed anew, ids aside."""
    groups: dict[str, set[int]] = {}
    for doc_id, (thread_id, _) in threads.assign(store.mail_headers()).threads.items():
        groups.setdefault(thread_id, set()).add(doc_id)
    return {frozenset(g) for g in groups.values()}


def counts(store: KnowledgeStore) -> dict[str, int]:
    found = Counter(
        a for m in store.mail_headers() for a in threads.addresses(m.sender, m.recipients, m.cc)
    )
    return dict(found)


@pytest.mark.parametrize("seed", range(6))
def test_threads_computed_where_mail_changed_are_those_of_computing_all(tmp_path, seed):
    rng = random.Random(seed)
    store = KnowledgeStore(open_db(tmp_path / "knowledge.db"))
    importer = Importer(store, FakeEmbedder())
    known: list[tuple[str, str]] = []
    n, partial = 0, 0
    for step in range(10):
        size = 80 if step == 0 else rng.randrange(2, 15)
        batch = [random_mail(rng, n + i, known) for i in range(size)]
        n += len(batch)
        report = importer.run([write_mbox(tmp_path / f"{step}.mbox", batch)], embed=False)
        assert report.threads is not None
        partial += not report.threads.whole
        ids = [r[0] for r in store.db.execute("SELECT id FROM documents").fetchall()]
        gone = rng.sample(ids, min(len(ids), rng.randrange(3)))
        store.remove_mail(gone)
        if ids and rng.random() < 0.3:  # a mail's headers read otherwise (a re-import)
            store.db.execute(
                "UPDATE documents SET title = ?, in_reply_to = NULL, refs = NULL WHERE id = ?",
                [rng.choice(SUBJECTS), rng.choice([i for i in ids if i not in gone] or ids)],
            )
        done = thread_update.update(store)
        partial += done is not None and not done.whole
        assert partition(store) == from_scratch(store)
        assert dict(store.db.execute("SELECT * FROM thread_people").fetchall()) == counts(store)
        assert not store.threads_due(threads.RULES)
        assert thread_update.rebuild(store).changed == 0  # every thread computed: the same
    assert partial >= 5  # most computed only what changed


def test_an_import_computes_the_threads_of_the_mail_it_added_only(tmp_path):
    store = KnowledgeStore(open_db(tmp_path / "knowledge.db"))
    importer = Importer(store, FakeEmbedder())
    rng = random.Random(7)
    known: list[tuple[str, str]] = []
    first = importer.run([write_mbox(tmp_path / "a.mbox", [
        random_mail(rng, i, known) for i in range(300)])], embed=False)  # fmt: skip
    assert first.threads is not None and first.threads.whole and first.threads.mails == 300
    later = [mail("Quarterly numbers", ME, PEOPLE[0], 130, "q1@x"),
             mail("Re: Quarterly numbers", PEOPLE[0], ME, 131, "q2@x")]  # fmt: skip
    report = importer.run([write_mbox(tmp_path / "b.mbox", later)], embed=False)
    assert report.threads is not None and not report.threads.whole
    assert (report.threads.mails, report.threads.threads, report.threads.by_subject) == (2, 1, 1)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "n.md").write_text("# Groceries\n\nMilk, eggs.\n")
    assert importer.run([notes], embed=False).threads is None  # no mail changed


def test_a_rebuild_that_meets_threads_stored_meanwhile_keeps_them(tmp_path, monkeypatch):
    """Every thread is computed outside the write lock: another process that imported (and
    stored its threads) meanwhile is not overwritten by threads of the mail before it."""
    path = tmp_path / "knowledge.db"
    store = KnowledgeStore(open_db(path))
    Importer(store, FakeEmbedder()).run([write_mbox(tmp_path / "a.mbox", [
        mail("Plan", ME, PEOPLE[0], 0, "x@x"),
        mail("Budget", ME, PEOPLE[1], 1, "y@x"),
        mail("Re: Budget", PEOPLE[1], ME, 2, "y2@x", In_Reply_To="<y@x>", References="<y@x>"),
    ])], embed=False)  # fmt: skip
    both = mail("Re: Plan", PEOPLE[0], ME, 3, "z@x", References="<x@x> <y@x>")  # joins them
    other, real, calls = KnowledgeStore(open_db(path)), thread_update.assign, []

    def meanwhile(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:  # while this process computes: another imports and stores
            Importer(other, FakeEmbedder()).run([write_mbox(tmp_path / "b.mbox", [both])])
        return real(*args, **kwargs)

    monkeypatch.setattr(thread_update, "assign", meanwhile)
    thread_update.rebuild(store)
    assert partition(store) == from_scratch(store)
    assert len(partition(store)) == 1
