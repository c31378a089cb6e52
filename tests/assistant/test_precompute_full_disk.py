"""A disk that fills up: a user question is still answered (its KV is not kept), and the night
stops at once, saying where the disk is full and what to do, with every job it could not finish
still queued for the next night (none marked failed for good, none marked done without its
node), and everything stored before kept."""

from __future__ import annotations

import errno
import sqlite3
from contextlib import closing

import pytest

import cache.blobs
from assistant import events as p
from assistant.precompute.runner import Precompute
from cache.files import replace_atomically
from cache.kv_tree import KIND
from tests.assistant.test_precompute import make_ctx

pytestmark = pytest.mark.slow


def _full(target, write, suffix=".tmp"):
    raise OSError(errno.ENOSPC, "No space left on device", str(target))


def _states(ctx) -> dict[str, str]:
    with closing(sqlite3.connect(ctx.home.cache_dir / "qa.db")) as conn:
        return dict(conn.execute("SELECT key, state FROM jobs").fetchall())


def test_a_full_disk_still_answers_and_stops_the_night_with_its_jobs_kept(tmp_path, monkeypatch):
    ctx = make_ctx(tmp_path)
    monkeypatch.setattr(cache.blobs, "replace_atomically", _full)
    events = list(ctx.answerer().answer("When does the kitchen demolition start?"))
    assert any(isinstance(e, p.TokenStreamed) for e in events)
    assert ctx.blobs.count(KIND) == 0

    report = Precompute(ctx.precompute_parts(), settle_seconds=0).run()
    assert report.stopped == "disk full" and report.failed == 0
    assert str(ctx.blobs.root) in report.problem and report.problem in report.summary()
    states = _states(ctx)
    nodes = [k for k in states if k.startswith("chunk_kv:")]
    assert nodes and all(states[k] == "queued" for k in nodes)
    assert "failed" not in states.values()

    monkeypatch.setattr(cache.blobs, "replace_atomically", replace_atomically)
    again = Precompute(ctx.precompute_parts(), settle_seconds=0).run()  # room again
    assert again.stopped == "finished" and again.failed == 0
    assert all(_states(ctx)[k] == "done" for k in nodes)
    assert ctx.blobs.count(KIND) >= len(nodes)
