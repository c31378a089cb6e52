"""`kill -9` in the middle of a night (`assistant precompute`): every chunk node whose job
finished and every answer stored before the kill is there after it, the databases are intact,
and the next night goes on from the queue without doing a finished job again."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
from contextlib import closing

import pytest

from assistant.importing.importer import Importer
from assistant.precompute.runner import Precompute
from assistant.services import open_services
from tests.conftest import make_email, write_mbox
from tests.robustness.checks import blob_problems, integrity, read_one
from tests.robustness.test_kill import MAILS, cli, kill_when

pytestmark = pytest.mark.slow

EXTRA = [(f"Update {i}", f"Ticket {i}00 for site {i} closes on {i} May; Ola signs it.") for i in
         range(6)]  # fmt: skip


def _finished(cache) -> set[str]:
    with closing(sqlite3.connect(cache)) as conn:
        rows = conn.execute("SELECT key FROM jobs WHERE state = 'done'").fetchall()
    return {r[0] for r in rows}


def _answers(cache) -> set[tuple[str, str]]:
    with closing(sqlite3.connect(cache)) as conn:
        rows = conn.execute("SELECT question, answer FROM qa_entries WHERE answer IS NOT NULL")
        return set(rows.fetchall())


def test_a_night_killed_midway_keeps_every_finished_node_and_answer(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSISTANT_LLM_N_THREADS", "1")
    monkeypatch.setenv("ASSISTANT_ANSWER_MAX_TOKENS", "24")
    monkeypatch.setenv("ASSISTANT_PRECOMPUTE_DECODE_CUTOFF", "0.99")  # τ below: answered
    home = tmp_path / "home"
    ctx = open_services(home)
    mails = MAILS + EXTRA
    msgs = [make_email(subject=s, body=b, msgid=f"<m{i}@x>") for i, (s, b) in enumerate(mails)]
    Importer(ctx.store, ctx.embedder).run([write_mbox(tmp_path / "box.mbox", msgs)])
    cache = home / "cache" / "qa.db"

    def midway() -> bool:  # nodes made and a predicted question answered, more to come
        answered = read_one(cache, "SELECT count(*) FROM qa_entries WHERE answer IS NOT NULL")
        return (answered or 0) >= 1

    proc = cli(home, "precompute", "--for", "10m", stdout=subprocess.DEVNULL)
    kill_when(proc, midway)
    assert proc.returncode == -signal.SIGKILL
    finished, answers = _finished(cache), _answers(cache)
    assert answers
    assert integrity(cache) == []
    with closing(sqlite3.connect(cache)) as conn:
        assert blob_problems(conn, home / "cache" / "kv") == []
    pending = read_one(cache, "SELECT count(*) FROM jobs WHERE state != 'done'")
    assert pending > 0  # killed in the middle, not at the end

    again = open_services(home)
    cache_part = again.prompt_cache()
    nodes = [k.split(":")[1] for k in finished if k.startswith("chunk_kv:")]
    texts = [r.text for r in again.store.chunk_records([int(c) for c in nodes])]
    assert len(texts) >= 3 and all(cache_part.kv_cached([t]) for t in texts)
    assert _answers(cache) >= answers
    report = Precompute(again.precompute_parts(), settle_seconds=0).run()
    assert report.stopped == "finished"
    assert finished <= _finished(cache) and _answers(cache) >= answers
    redone = read_one(cache, "SELECT count(*) FROM jobs WHERE attempts > 1 AND state = 'done'")
    assert redone <= 1  # at most the job the kill interrupted runs again
