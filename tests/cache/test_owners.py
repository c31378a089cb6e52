"""The queries each table's owner offers its callers (no caller writes SQL of its own)."""

from __future__ import annotations

import time

import numpy as np

from cache.blobs import BlobStore
from cache.db import open_cache_db
from cache.jobs import JobQueue
from cache.meta import CacheMeta
from cache.qa_bank import QABank
from cache.runs import RunLog


def unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_the_qa_bank_lists_its_answered_stale_and_pending_entries_oldest_first():
    bank = QABank(open_cache_db(None), threshold=0.9, budget_bytes=1 << 20)
    fresh = bank.add("when is the party", unit(1, 0, 0), "Friday.")
    pending = bank.add("who brings the cake", unit(0, 1, 0), None, origin="predicted")
    stale = bank.add("where is the party", unit(0, 0, 1), "At Anna's.")
    later = bank.add("what time is the party", unit(1, 1, 0), "At eight.")
    bank.mark_stale([stale])
    assert [e.id for e in bank.answered()] == [fresh, later]
    assert [e.id for e in bank.answered(stale=True)] == [stale]
    assert [e.id for e in bank.pending()] == [pending]
    assert [e.id for e in bank.entries()] == [fresh, pending, stale, later]


def test_most_used_lists_answered_fresh_entries_by_hits_then_recency():
    bank = QABank(open_cache_db(None), threshold=0.9, budget_bytes=1 << 20)
    once = bank.add("when is the party", unit(1, 0, 0), "Friday.")
    twice = bank.add("where is the party", unit(0, 0, 1), "At Anna's.")
    bank.add("who brings the cake", unit(0, 1, 0), None, origin="predicted")
    unused = bank.add("what time is the party", unit(1, 1, 0), "At eight.")
    for vector in (unit(1, 0, 0), unit(0, 0, 1), unit(0, 0, 1)):
        bank.lookup(vector)
    ranked = bank.most_used(limit=10)
    assert [r[0] for r in ranked] == [twice, once, unused]
    assert [r[1] for r in ranked] == [2, 1, 0]
    assert bank.most_used(limit=1)[0][0] == twice


def test_the_job_queue_lists_the_keys_of_a_kind_in_any_state():
    queue = JobQueue(open_cache_db(None))
    queue.enqueue("predict_detail", "detail:4")
    queue.enqueue("predict_detail", "detail:9")
    queue.enqueue("decode", "decode:1")
    queue.finish(queue.claim(), 0.1)  # detail:4 is done, detail:9 still queued
    assert sorted(queue.keys("predict_detail")) == ["detail:4", "detail:9"]
    assert queue.keys("rebuild_kv") == []


def test_the_blob_store_says_which_keys_it_holds(tmp_path):
    blobs = BlobStore(open_cache_db(None), tmp_path, {"doc_kv": 1000})
    blobs.put("doc_kv", "a1", b"x" * 10)
    assert blobs.has("a1") and not blobs.has("b2")
    blobs.delete("a1")
    assert not blobs.has("a1")


def test_the_run_log_reports_the_last_run_that_ended():
    runs = RunLog(open_cache_db(None))
    assert runs.last() is None
    first = runs.open()
    runs.close(first, jobs=3, cpu_s=1.26, stopped="deadline", kinds={"chunk_kv": 2, "decode": 1})
    runs.open()  # still running (or killed): not the last run that ended
    last = runs.last()
    assert last is not None
    assert {k: last[k] for k in ("jobs", "cpu_s", "stopped")} == {
        "jobs": 3,
        "cpu_s": 1.3,
        "stopped": "deadline",
    }
    assert last["finished"].startswith(time.strftime("%Y-", time.gmtime()))
    assert last["by_kind"] == {"chunk_kv": 2, "decode": 1} and last["minutes"] >= 0


def test_cache_meta_keeps_one_value_per_key():
    meta = CacheMeta(open_cache_db(None))
    assert meta.get("refresh_version", "0") == "0"
    meta.set("refresh_version", "3")
    meta.set("refresh_version", "4")
    assert meta.get("refresh_version", "0") == "4"
