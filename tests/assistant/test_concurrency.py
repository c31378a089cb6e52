"""Two writers on one home at once (the idle scheduler and the user): WAL and a busy timeout keep
both working, and nothing is lost or corrupted."""

from __future__ import annotations

import threading

import numpy as np

from assistant.importing.importer import Importer
from assistant.knowledge.db import open_db
from assistant.knowledge.store import KnowledgeStore
from cache.db import open_cache_db
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
