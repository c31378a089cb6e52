"""Two writers on one home at once (the idle scheduler and the user): WAL and a busy timeout keep
both working, and nothing is lost or corrupted."""

from __future__ import annotations

import sqlite3
import threading

import numpy as np
import pytest
from sqlite_utils import Database

import cache.db
from assistant.importing.importer import Importer
from assistant.knowledge.db import MIGRATIONS, DatabaseError, open_db
from assistant.knowledge.retrieval import Retriever
from assistant.knowledge.store import KnowledgeStore
from cache.db import apply_migrations, connect, open_cache_db
from cache.qa_bank import QABank
from tests.conftest import FakeEmbedder, make_email, write_mbox


def test_import_and_qa_writes_from_two_threads(tmp_path):
    boxes = [
        write_mbox(
            tmp_path / f"box{b}.mbox",
            [
                make_email(subject=f"Mail {b}-{i}", body=f"Body {b} {i}.", msgid=f"<{b}.{i}@x>")
                for i in range(40)
            ],
        )
        for b in range(2)
    ]
    errors: list[BaseException] = []

    def import_box(box):
        try:  # each thread has its own connection, as the scheduler and the UI will
            store = KnowledgeStore(open_db(tmp_path / "knowledge.db"))
            Importer(store, FakeEmbedder(), embed_batch=4).run([box])
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    def answer_questions():
        try:
            bank = QABank(open_cache_db(tmp_path / "qa.db"), 0.9, 1 << 20)
            for i in range(60):
                v = np.eye(8, dtype=np.float32)[i % 8]
                bank.add(f"q{i}", v, f"a{i}")
                bank.lookup(v)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    open_db(tmp_path / "knowledge.db")  # create the schema once
    threads = [threading.Thread(target=import_box, args=(b,)) for b in boxes]
    threads += [threading.Thread(target=answer_questions) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []
    store = KnowledgeStore(open_db(tmp_path / "knowledge.db"))
    assert store.stats()["emails"] == 80 and store.stats()["embedded_chunks"] == 80
    assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    bank = QABank(open_cache_db(tmp_path / "qa.db"), 0.9, 1 << 20)
    assert bank.stats()["entries"] == 120


def _hold_write_lock(path):
    """Another process's import, as SQLite sees it: a write transaction left open."""
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    return other


def test_a_home_being_written_by_another_process_opens_and_searches(tmp_path, monkeypatch):
    path = tmp_path / "knowledge.db"
    box = write_mbox(tmp_path / "a.mbox", [make_email(subject="Kitchen", body="Tiles on Monday.")])
    Importer(KnowledgeStore(open_db(path)), FakeEmbedder()).run([box])
    monkeypatch.setattr(cache.db, "BUSY_TIMEOUT", 0.5)  # the night's import outlasts it
    other = _hold_write_lock(path)
    try:
        store = KnowledgeStore(open_db(path))  # was: "database is locked" after the timeout
        hits = Retriever(store, FakeEmbedder(), tmp_path / "index").search("tiles Monday")
    finally:
        other.execute("ROLLBACK")
    assert [h.record.title for h in hits] == ["Kitchen"]


def test_an_update_of_the_tables_blocked_by_another_writer_says_what_to_do(tmp_path, monkeypatch):
    path = tmp_path / "knowledge.db"
    old = Database(connect(path))  # a home of the version before the last migration
    apply_migrations(old, MIGRATIONS[:-1])
    monkeypatch.setattr(cache.db, "BUSY_TIMEOUT", 0.5)
    other = _hold_write_lock(path)
    try:
        with pytest.raises(DatabaseError, match="try again once it is done") as err:
            open_db(path)
    finally:
        other.execute("ROLLBACK")
    assert str(path) in str(err.value)
    assert MIGRATIONS[-1][0] in {
        r[0] for r in open_db(path).execute("SELECT name FROM _migrations")
    }
