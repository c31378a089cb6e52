"""Two precompute passes on one home from two processes (the night's timer and the app's idle
pass): one runs, the other waits for it (`assistant precompute`) or skips (the idle pass); no
job is taken from the running pass and done a second time beside it. A pass killed with -9
leaves no lock behind."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from assistant.precompute.home_lock import HomeLock
from assistant.precompute.runner import Precompute, PrecomputeBusy
from assistant.services import open_services
from tests.assistant.test_precompute import make_ctx
from tests.conftest import REPO

HOLD = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from assistant.precompute.home_lock import HomeLock\n"
    "assert HomeLock(Path(sys.argv[1])).acquire()\n"
    "print('held', flush=True)\n"
    "time.sleep(600)\n"
)


@pytest.mark.slow
def test_a_pass_in_another_process_neither_steals_nor_redoes_the_running_job(tmp_path):
    night = make_ctx(tmp_path)  # the timer's process, say
    app = open_services(night.home.root)  # the app's: connections and locks of its own
    first = Precompute(night.precompute_parts(), settle_seconds=0)
    second = Precompute(app.precompute_parts(), settle_seconds=0)
    ran: dict[str, list[str]] = {"first": [], "second": []}
    met: list[str] = []
    real_first, real_second = first.handlers.run, second.handlers.run

    def first_job(job) -> None:
        ran["first"].append(job.key)
        if len(ran["first"]) == 1:  # the other process's passes start while this job runs
            with pytest.raises(PrecomputeBusy, match=r"running in process \d+"):
                second.run(wait=False)  # the idle pass: skipped
            waited = second.run(deadline=time.time() + 1, notify=lambda e: met.append(e.job))
            assert waited.stopped == "deadline" and waited.jobs_done == 0
        real_first(job)

    def second_job(job) -> None:
        ran["second"].append(job.key)
        real_second(job)

    first.handlers.run, second.handlers.run = first_job, second_job
    report = first.run()
    assert report.stopped == "finished" and report.failed == 0 and ran["first"]
    assert ran["second"] == [] and met and "waiting for the running precompute in process" in met[0]
    again = second.run()  # its turn once the first has ended
    assert again.stopped == "finished" and not set(ran["first"]) & set(ran["second"])


def test_the_lock_of_a_pass_killed_with_9_is_free_at_once(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path)], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        lock = HomeLock(tmp_path)
        assert not lock.acquire()
        assert lock.holder() == f"process {holder.pid}"
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert lock.acquire()  # no stale lock: the kernel dropped it with its process
    lock.release()


def test_the_next_pass_tells_a_pass_that_ended_from_one_that_was_killed(tmp_path):
    """A job left 'running' by a pass that ended is one it could not write back (the disk full):
    put back uncounted; by a pass whose process was killed, one that may have killed it: counted
    (cache/jobs.py recover). The pass that ended emptied the lock's file; a killed one could not."""
    first = HomeLock(tmp_path)
    assert first.acquire() and not first.last_ended  # no pass before it: none known to end
    first.release(ended=True)
    second = HomeLock(tmp_path)
    assert second.acquire() and second.last_ended
    second.release()  # ended before it swept: the jobs left running are not its own to say
    third = HomeLock(tmp_path)
    assert third.acquire() and not third.last_ended
    third.release(ended=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path)], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    after = HomeLock(tmp_path)
    assert after.acquire() and not after.last_ended
    after.release()


def test_a_lock_taken_with_no_room_for_its_pid_is_held_all_the_same(tmp_path, monkeypatch, caplog):
    """On a disk with no room left, writing the holder's pid ended the night with an OSError
    traceback before it could say the disk is full (its first write to the cache does)."""
    import errno
    import os

    def no_room(fd, data, offset):
        raise OSError(errno.ENOSPC, "No space left on device")

    lock = HomeLock(tmp_path)
    monkeypatch.setattr(os, "pwrite", no_room)
    assert lock.acquire()
    monkeypatch.undo()
    assert not HomeLock(tmp_path).acquire()  # held
    assert "pid not written" in caplog.text and "No space left" in caplog.text
    lock.release()
