"""Two writers in one process on the app's real wiring, and a third in another process.

`open_services` opens each database once and every thread of the app shares that connection: the
idle precompute (jobs, predicted QA entries, KV nodes and blobs, sentence vectors, the abstract),
the user's question (history, hits, the stored answer, its KV) and an import into the knowledge
bank. Their write transactions must not interleave on the shared connection (no "cannot start a
transaction within a transaction", no write committed or rolled back by another thread's
transaction), and a manual precompute in another process writes the same files meanwhile (SQLite's
lock and busy timeout). Afterwards every row each of them wrote is there.

The models are fakes (a hashing embedder, a KV tree named for no LLM): what is tested is the
databases' wiring, which is the app's own.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from assistant.services import Services, open_services
from cache.jobs import JobQueue
from cache.kv_tree import KVTree
from cache.meta import CacheMeta
from cache.prediction import AbstractItem, History, KnowledgeAbstract
from cache.runs import RunLog
from cache.sentences import SentenceVectors
from tests.conftest import FakeEmbedder, make_email, write_mbox
from tests.robustness.checks import blob_problems, integrity

ROUNDS = 400
MAILS = 30
MODEL = "two-writers-model"


def wire(home: Path) -> Services:
    """The app's services on `home`, with a fake embedder and a KV tree that loads no LLM."""
    services = open_services(home)
    services._embedder = FakeEmbedder()
    services._kv = KVTree(services.cache_db, services.blobs, MODEL)
    return services


def vector(text: str) -> np.ndarray:
    return FakeEmbedder().embed_batch([text])[0]


def precompute(services: Services, name: str, rounds: int = ROUNDS) -> None:
    """What a precompute pass writes, job by job (the runner's and its handlers' writes)."""
    jobs, runs = JobQueue(services.cache_db), RunLog(services.cache_db)
    sentences = SentenceVectors(services.cache_db)
    abstract, meta = KnowledgeAbstract(services.cache_db), CacheMeta(services.cache_db)
    run = runs.open()
    for i in range(rounds):
        jobs.enqueue("populate", f"{name}-{i}")
        job = jobs.claim()
        assert job is not None
        question = f"what did {name} predict in round {i}"
        services.qa.add(question, vector(question), f"answer {i}", [str(i)], origin="predict")
        services.kv.store([f"{name}-system", f"{name}-{i}"], 100 + i, bytes([i % 251]) * 512)
        sentences.put("fake-hash-64", f"{name}-chunk-{i}", np.ones((3, 4), np.float32))
        abstract.merge([AbstractItem(i, "topic", f"{name} topic {i}")])
        meta.set(f"{name}-upto", str(i))
        jobs.finish(job, 0.0)
    runs.close(run, rounds, 0.0, "finished")


def ask(services: Services, name: str, rounds: int = ROUNDS) -> None:
    """What the user's questions write: history, hits, the stored answer and its prompt's KV."""
    history, sentences = History(services.cache_db), SentenceVectors(services.cache_db)
    for i in range(rounds):
        question = f"what did {name} ask in round {i}"
        row = history.add(question)
        services.qa.lookup(vector(question))
        sentences.get("fake-hash-64", [f"{name}-chunk-{i - 1}"])
        sentences.put("fake-hash-64", f"{name}-chunk-{i}", np.ones((2, 4), np.float32))
        services.kv.store([f"{name}-system", f"{name}-{i}"], 50 + i, bytes([i % 251]) * 256)
        services.kv.longest_prefix([f"{name}-system", f"{name}-{i}"])
        services.qa.add(question, vector(question), f"answer {i}", [str(i)], origin="user")
        history.retrieved(row, [i])


def import_mail(services: Services, box: Path) -> None:
    report = services.importer().run([box])
    assert report.added == MAILS, report


def other_process(home: str, box: str) -> None:
    """A manual precompute and an import in a process of their own (spawned)."""
    services = wire(Path(home))
    imported = threading.Thread(target=import_mail, args=(services, Path(box)))
    imported.start()
    precompute(services, "manual")
    imported.join()


def run_all(parts: list[Callable[[], None]]) -> list[BaseException]:
    errors: list[BaseException] = []
    start = threading.Barrier(len(parts))

    def body(part: Callable[[], None]) -> None:
        try:
            start.wait()
            part()
        except BaseException as exc:  # noqa: BLE001 - reported by the caller's assertion
            errors.append(exc)

    threads = [threading.Thread(target=body, args=(part,)) for part in parts]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return errors


def mailbox(path: Path, tag: str) -> Path:
    mails = [
        make_email(subject=f"{tag} {i}", body=f"Body {tag} {i}.", msgid=f"<{tag}.{i}@x>")
        for i in range(MAILS)
    ]
    return write_mbox(path, mails)


def test_idle_precompute_user_answers_import_and_another_process_lose_nothing(tmp_path):
    home = tmp_path / "home"
    services = wire(home)
    services.qa.stats()  # the cache database exists before the other process opens it
    boxes = [mailbox(tmp_path / f"{tag}.mbox", tag) for tag in ("here", "there")]
    process = multiprocessing.get_context("spawn").Process(
        target=other_process, args=(str(home), str(boxes[1]))
    )
    process.start()
    errors = run_all(
        [
            lambda: precompute(services, "idle"),
            lambda: ask(services, "user"),
            lambda: import_mail(services, boxes[0]),
        ]
    )
    process.join(timeout=120)
    assert errors == [], errors
    assert process.exitcode == 0

    db = services.cache_db
    origins = dict(db.execute("SELECT origin, count(*) FROM qa_entries GROUP BY origin"))
    assert origins == {"predict": 2 * ROUNDS, "user": ROUNDS}
    assert db.execute("SELECT count(*) FROM jobs WHERE state = 'done'").fetchone()[0] == 2 * ROUNDS
    assert db.execute("SELECT count(*) FROM runs WHERE finished IS NOT NULL").fetchone()[0] == 2
    assert (
        db.execute("SELECT count(*) FROM kv_nodes WHERE blob_key IS NOT NULL").fetchone()[0]
        == 3 * ROUNDS
    )
    assert db.execute("SELECT count(*) FROM sentence_vectors").fetchone()[0] == 3 * ROUNDS
    assert db.execute("SELECT count(*) FROM abstract_items").fetchone()[0] == 2 * ROUNDS
    assert db.execute("SELECT count(*) FROM history WHERE chunks != '[]'").fetchone()[0] == ROUNDS
    assert services.store.stats()["emails"] == 2 * MAILS
    assert services.store.stats()["embedded_chunks"] == services.store.stats()["chunks"]
    assert integrity(home / "cache" / "qa.db") == [] and integrity(home / "knowledge.db") == []
    assert blob_problems(db.conn, home / "cache" / "kv") == []
