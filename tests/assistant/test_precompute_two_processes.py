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
