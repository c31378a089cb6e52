"""The cache database finding no room (SQLite's own "database or disk is full", SQLITE_FULL):
the night stops at once, saying which file and what to do, with the job it was running back in
the queue (or, when even that write finds no room, left for the next run to put back), none
failed, and everything stored before kept; a user's question is answered all the same, what it
would keep not kept."""

from __future__ import annotations

import errno
import logging
import sqlite3
from contextlib import closing

import pytest

import cache.blobs
from assistant import events as p
from assistant.precompute.handlers import Handlers
from assistant.precompute.runner import Precompute
from cache.files import replace_atomically
from cache.jobs import JobQueue
from cache.kv_tree import KIND
from tests.assistant.test_precompute import make_ctx

pytestmark = pytest.mark.slow

QUESTION = "When does the kitchen demolition start?"


class Disk:
    """The cache database's disk, which fills up when told (`fill`): from then on the database
    may not grow by a page, and every write to a table (but the `spare` ones, whose rows then
    change in place) needs a page more, so that SQLite itself answers SQLITE_FULL. The triggers
    that make it so are set up at once, outside any transaction (one rolled back takes with it
    what it created), and fire only once the disk is full."""

    def __init__(self, conn: sqlite3.Connection, spare: tuple[str, ...] = ()) -> None:
        self.conn, self.is_full = conn, False
        conn.create_function("disk_full", 0, lambda: self.is_full)
        conn.execute("CREATE TABLE IF NOT EXISTS filler (x BLOB)")
        tables = conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        ).fetchall()
        for (table,) in tables:
            if table in (*spare, "filler"):
                continue
            for op in ("INSERT", "UPDATE", "DELETE"):
                conn.execute(
                    f"CREATE TEMP TRIGGER full_{table}_{op} BEFORE {op} ON main.{table} "
                    "WHEN disk_full() BEGIN INSERT INTO filler VALUES (zeroblob(65536)); END"
                )

    def fill(self) -> None:
        self.is_full = True
        pages = self.conn.execute("PRAGMA page_count").fetchone()[0]
        self.conn.execute(f"PRAGMA max_page_count = {pages}")

    def free(self) -> None:
        self.is_full = False
        self.conn.execute("PRAGMA max_page_count = 1073741823")


def _states(ctx) -> dict[str, str]:
    with closing(sqlite3.connect(ctx.home.cache_dir / "qa.db")) as conn:
        return dict(conn.execute("SELECT key, state FROM jobs").fetchall())


def _last_room_taken_by_a_node(ctx, monkeypatch, spare: tuple[str, ...]) -> Disk:
    """The next KV node's file takes the disk's last room: its row (and what follows) finds
    none."""
    disk = Disk(ctx.cache_db.conn, spare)

    def write_then_full(target, write, suffix=".tmp"):
        replace_atomically(target, write, suffix)
        disk.fill()

    monkeypatch.setattr(cache.blobs, "replace_atomically", write_then_full)
    return disk


def _stopped_for_room(ctx, report) -> None:
    db = ctx.home.cache_dir / "qa.db"
    assert report.stopped == "disk full" and report.failed == 0
    assert str(db) in report.problem and f"free some space in {db.parent}" in report.problem
    assert report.problem in report.summary()


@pytest.mark.parametrize("spare", [("jobs",), ()], ids=["job-put-back", "nothing-written"])
def test_a_full_cache_database_stops_the_night_with_its_jobs_kept(tmp_path, monkeypatch, spare):
    """With "job-put-back" the queue's rows still change in place, so the job is put back at once;
    with "nothing-written" not even that (it failed the run with a traceback, trying to mark the
    job failed), so the job stays 'running' and the next run puts it back."""
    ctx = make_ctx(tmp_path)
    list(ctx.answerer().answer(QUESTION))
    entries = [e.id for e in ctx.answerer().qa.entries()]
    assert entries
    disk = _last_room_taken_by_a_node(ctx, monkeypatch, spare)

    report = Precompute(ctx.precompute_parts(), settle_seconds=0).run()
    _stopped_for_room(ctx, report)
    states = _states(ctx)
    nodes = [k for k in states if k.startswith("chunk_kv:")]
    assert nodes and "failed" not in states.values()
    pending = {"queued"} if spare else {"queued", "running"}
    assert {states[k] for k in nodes} <= pending and "done" not in {states[k] for k in nodes}

    again = Precompute(ctx.precompute_parts(), settle_seconds=0).run()  # still full
    _stopped_for_room(ctx, again)

    monkeypatch.setattr(cache.blobs, "replace_atomically", replace_atomically)
    disk.free()
    last = Precompute(ctx.precompute_parts(), settle_seconds=0).run()
    assert last.stopped == "finished" and last.failed == 0 and not last.problem
    assert all(_states(ctx)[k] == "done" for k in nodes)
    assert ctx.blobs.count(KIND) >= len(nodes)
    assert set(entries) <= {e.id for e in ctx.answerer().qa.entries()}


@pytest.mark.parametrize("own_file", [False, True], ids=["database", "own-file"])
def test_a_job_whose_put_back_finds_no_room_is_tried_again_not_failed(
    tmp_path, monkeypatch, own_file
):
    """The disk full, a job interrupted by it could not even be written back in the queue: it
    stayed 'running', the next night's start took it for a job its process died in, and after
    two such nights it was failed for good (its mail never got its node). A night that ends so
    leaves it for the next start to put back, uncounted: however many nights, it is pending.
    Each night says where the disk is full and what to do (a file of the job's own: its
    folder; it said "the disk is full" alone)."""
    ctx = make_ctx(tmp_path)
    tried: list[str] = []
    kept = ctx.home.cache_dir / "reader" / "instruction.kv"

    def no_room(self, job) -> None:
        tried.append(job.key)
        if own_file:
            raise OSError(errno.ENOSPC, "No space left on device", str(kept))
        raise sqlite3.OperationalError("database or disk is full")

    def put_back_without_room(self, job) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(Handlers, "run", no_room)
    monkeypatch.setattr(JobQueue, "release", put_back_without_room)
    for _ in range(3):  # more nights than a job's attempts
        report = Precompute(ctx.precompute_parts(), settle_seconds=0).run()
        if own_file:
            assert report.stopped == "disk full" and report.failed == 0
            where = f"no space left on the disk for {kept.parent} (No space left on device): "
            assert report.problem == where + "free some space there"
        else:
            _stopped_for_room(ctx, report)
        assert _states(ctx)[tried[-1]] == "running"
    assert len(tried) == 3 and len(set(tried)) == 1  # the same job each night
    monkeypatch.undo()
    start = Precompute(ctx.precompute_parts(), settle_seconds=0).run(cancelled=lambda: True)
    assert start.stopped == "cancelled" and _states(ctx)[tried[0]] == "queued"
    assert "failed" not in _states(ctx).values()


def test_a_full_cache_database_still_answers_the_user(tmp_path, caplog):
    """A question asked with no room in the cache database is answered all the same: what it
    would keep (its history row, KV, QA entry, counters) is not kept, the log says so, where and
    what to do; a repeat the QA bank serves is served. It failed with a traceback, at its first
    write (its history row)."""
    caplog.set_level(logging.INFO, logger="cache.room")
    ctx = make_ctx(tmp_path)
    pipe = ctx.answerer()
    kept = _done(pipe.answer(QUESTION))
    entries = [(e.id, e.hits, e.answer) for e in pipe.qa.entries()]
    assert entries and not kept.qa_hit
    Disk(ctx.cache_db.conn).fill()

    events = list(pipe.answer("Which tiles did we choose?"))
    assert any(isinstance(e, p.TokenStreamed) for e in events)
    assert "Warm Grey" in _done(events).sentence
    again = _done(pipe.answer(QUESTION))
    assert again.qa_hit and again.answer == kept.answer
    assert [(e.id, e.hits, e.answer) for e in pipe.qa.entries()] == entries  # none added

    db = ctx.home.cache_dir / "qa.db"
    said = [r.getMessage() for r in caplog.records if "not kept" in r.getMessage()]
    assert any(m.startswith("the QA entry not kept") for m in said)
    where = f"not kept: no space left on the disk for the cache database {db} ("
    assert sum(where in m and "free some space" in m for m in said) == 2  # once a question


def _done(events) -> p.AnswerDone:
    done = [e for e in events if isinstance(e, p.AnswerDone)]
    assert len(done) == 1
    return done[0]


def test_no_room_outside_a_job_stops_the_night_saying_where(tmp_path, monkeypatch):
    """The night's own start (sweeping what a killed writer left, planning) can also find the
    disk full, as an OSError: it ended the night with a traceback; it now stops it as a job's
    would, saying where and what to do, nothing failed."""
    ctx = make_ctx(tmp_path)
    where = ctx.home.cache_dir / "blobs" / "x.tmp"

    def sweep_without_room(self) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(where))

    monkeypatch.setattr(cache.blobs.BlobStore, "sweep_orphans", sweep_without_room)
    report = Precompute(ctx.precompute_parts(), settle_seconds=0).run()
    assert report.stopped == "disk full" and report.failed == 0
    assert report.problem.startswith(f"no space left on the disk for {where.parent}")
    assert "failed" not in _states(ctx).values()
