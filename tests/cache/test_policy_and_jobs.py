"""Population policy (strategy from τ vs the cutoff; conversions) and the persisted job queue."""

from __future__ import annotations

from cache import policy
from cache.db import open_cache_db
from cache.jobs import JobQueue
from cache.policy import RebuildCandidate, Strategy


def test_strategy_1_at_or_above_the_cutoff_and_2_below():
    assert policy.choose_strategy(0.95, cutoff=0.9) is Strategy.PREFILL
    assert policy.choose_strategy(0.90, cutoff=0.9) is Strategy.PREFILL
    assert policy.choose_strategy(0.85, cutoff=0.9) is Strategy.PREFILL_DECODE
    assert not policy.decode_pending(0.95, 0.9) and policy.decode_pending(0.8, 0.9)


def test_rebuilds_fill_the_room_most_hit_first():
    cands = [RebuildCandidate(1, 0, 5.0), RebuildCandidate(2, 7, 1.0), RebuildCandidate(3, 7, 9.0)]
    assert policy.pick_rebuilds(cands, room_bytes=250, bytes_per_entry=100) == [3, 2]
    assert policy.pick_rebuilds(cands, room_bytes=0, bytes_per_entry=100) == []
    assert policy.kv_room(used_bytes=80, budget_bytes=100) == 10
    assert policy.kv_room(used_bytes=95, budget_bytes=100) == 0


def test_a_key_is_queued_once_and_never_redone():
    q = JobQueue(open_cache_db(None))
    assert q.enqueue("populate", "populate:a", {"question": "a?"}, priority=40)
    assert not q.enqueue("populate", "populate:a", {"question": "a?"}, priority=40)
    job = q.claim()
    q.finish(job, cpu_s=0.1)
    assert not q.enqueue("populate", "populate:a")
    assert q.claim() is None
    assert q.counts() == {"queued": 0, "running": 0, "done": 1, "failed": 0}


def test_claims_follow_priority_then_age():
    q = JobQueue(open_cache_db(None))
    q.enqueue("populate", "p1", priority=40)
    q.enqueue("refresh", "r1", priority=10)
    q.enqueue("populate", "p2", priority=40)
    assert [q.claim().key for _ in range(3)] == ["r1", "p1", "p2"]


def test_a_job_left_running_by_a_killed_process_is_recovered(tmp_path):
    path = tmp_path / "qa.db"
    first = JobQueue(open_cache_db(path))
    first.enqueue("populate", "done-before-the-kill")
    first.enqueue("populate", "running-at-the-kill")
    first.finish(first.claim(), 1.0)
    assert first.claim().key == "running-at-the-kill"  # then the process dies

    again = JobQueue(open_cache_db(path))
    assert again.recover() == []  # put back, none given up
    job = again.claim()
    assert job.key == "running-at-the-kill" and job.attempts == 2
    assert again.claim() is None  # the finished one is not redone


def test_a_job_running_each_time_its_process_died_is_given_up_not_retried_for_ever(tmp_path):
    """A job that kills its process (a crash in the model, the memory it takes) was put back
    and claimed first again by every run after it, each dying at it: no night went on again."""
    path = tmp_path / "qa.db"
    for _ in range(2):  # two runs, each dying in the job
        q = JobQueue(open_cache_db(path), max_attempts=2)
        assert q.recover() == []  # put back, the first time
        q.enqueue("chunk_kv", "deadly", priority=1)
        q.enqueue("chunk_kv", "fine", priority=2)
        assert q.claim().key == "deadly"  # then the process dies, the job running
    again = JobQueue(open_cache_db(path), max_attempts=2)
    assert again.recover() == ["deadly"]
    assert again.state_of("deadly") == "failed" and "process ended" in _error(again, "deadly")
    assert again.claim().key == "fine" and again.claim() is None
    assert not again.enqueue("chunk_kv", "deadly")  # planned again: not queued


def _error(q: JobQueue, key: str) -> str:
    return q.db.execute("SELECT error FROM jobs WHERE key = ?", [key]).fetchone()[0]


def test_failed_jobs_retry_up_to_the_limit_and_released_ones_are_not_counted():
    q = JobQueue(open_cache_db(None), max_attempts=2)
    q.enqueue("decode", "d")
    q.fail(q.claim(), "boom")
    assert q.enqueue("decode", "d")  # second attempt allowed
    job = q.claim()
    q.release(job)  # preempted: back in the queue, attempt not spent
    job = q.claim()
    assert job.attempts == 2
    q.fail(job, "boom again")
    assert not q.enqueue("decode", "d")
    assert q.counts()["failed"] == 1


def test_a_job_left_running_by_a_run_that_ended_is_put_back_uncounted(tmp_path):
    """A night that stopped on a full disk could not even write its job back in the queue: the
    next run took it for a job its process died in, and after two such nights failed it for
    good. Left by a run that ended (precompute/home_lock.py tells), it goes back uncounted."""
    path = tmp_path / "qa.db"
    for _ in range(3):  # more nights than its attempts, each stopped with it running
        q = JobQueue(open_cache_db(path), max_attempts=2)
        assert q.recover(ended=True) == []
        q.enqueue("chunk_kv", "interrupted", priority=1)
        assert q.claim().key == "interrupted"  # then its put back finds no room
    again = JobQueue(open_cache_db(path), max_attempts=2)
    assert again.recover(ended=True) == [] and again.state_of("interrupted") == "queued"
    assert again.claim().attempts == 1
