"""A precompute job that kills its process each time it runs (a crash in the model, the memory
it takes, every night at the same chunk): the next nights put it back and claimed it first
again, each dying at it, and no night ever went on. Now a job that was running at two deaths
of its process is failed, and the night after goes on with the rest."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from contextlib import closing

import pytest

from tests.assistant.test_precompute import make_ctx
from tests.conftest import REPO

pytestmark = pytest.mark.slow

NIGHT = (
    "import os, signal, sys\n"
    "from pathlib import Path\n"
    "from assistant.precompute.runner import Precompute\n"
    "from assistant.services import open_services\n"
    "runner = Precompute(open_services(Path(sys.argv[1])).precompute_parts(), settle_seconds=0)\n"
    "run = runner.handlers.run\n"
    "def deadly(job):\n"
    "    if job.kind == 'abstract':\n"
    "        os.kill(os.getpid(), signal.SIGKILL)\n"
    "    run(job)\n"
    "runner.handlers.run = deadly\n"
    "print(runner.run(deadline=__import__('time').time() + 300).stopped)\n"
)


def _night(home) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-c", NIGHT, str(home)]
    return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=300)


def test_a_job_that_kills_every_night_is_given_up_after_two(tmp_path):
    ctx = make_ctx(tmp_path)
    home = ctx.home.root
    for _ in range(2):
        assert _night(home).returncode == -signal.SIGKILL
    third = _night(home)
    assert third.returncode == 0, third.stderr[-2000:]
    assert third.stdout.strip() == "finished"
    with closing(sqlite3.connect(home / "cache" / "qa.db")) as conn:
        rows = dict(conn.execute("SELECT kind, state FROM jobs WHERE kind = 'abstract'"))
        done = conn.execute("SELECT count(*) FROM jobs WHERE kind = 'chunk_kv' AND state = 'done'")
        assert rows == {"abstract": "failed"} and done.fetchone()[0] > 0


def test_ctrl_c_in_a_job_puts_it_back_uncounted(tmp_path):
    """Ctrl-C in `assistant precompute` is no death by the job: it goes back in the queue with
    its try not counted, so two of them never give a job up."""
    from assistant.precompute.runner import Precompute

    runner = Precompute(make_ctx(tmp_path).precompute_parts(), settle_seconds=0)
    stopped: list[str] = []

    def interrupted(job) -> None:
        stopped.append(job.key)
        raise KeyboardInterrupt

    runner.handlers.run = interrupted
    for _ in range(3):
        with pytest.raises(KeyboardInterrupt):
            runner.run()
    row = runner.queue.db.execute("SELECT state, attempts FROM jobs WHERE key = ?", [stopped[0]])
    assert row.fetchone() == ("queued", 0) and stopped == stopped[:1] * 3
