"""`kill -9` in the middle of a night (`assistant precompute`): every chunk node whose job
finished and every answer stored before the kill is there after it, the databases are intact,
and the next night goes on from the queue without doing a finished job again."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import time
from contextlib import closing

import pytest

from assistant.importing.importer import Importer
from assistant.precompute.runner import Precompute
from assistant.services import open_services
from tests.conftest import make_email, real_1_5b, write_mbox
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


def _writing(kv_root) -> bool:
    """A KV blob is being written: its temporary file is there (cache/files.py)."""
    return kv_root.is_dir() and any(kv_root.glob("*/.*.tmp"))


def test_a_night_at_1_5b_killed_while_writing_a_node_leaves_the_tree_consistent(
    tmp_path, monkeypatch
):
    """The writer at 1.5B (issue 47), whose nodes are the night's dearest work: `kill -9` while
    a chunk node's blob is being written (else just after one is), then every row verifies,
    every finished node restores, and what the killed write left on disk is swept."""
    real_1_5b()  # the model is here (and fits), or the test says why not
    monkeypatch.setenv("ASSISTANT_MODELS_WRITER", "qwen2.5-coder-1.5b")
    monkeypatch.setenv("ASSISTANT_LLM_N_THREADS", "1")
    monkeypatch.setenv("ASSISTANT_PRECOMPUTE_DECODE_CUTOFF", "0")  # nodes only, no answers
    home = tmp_path / "home"
    ctx = open_services(home)
    mails = MAILS + EXTRA
    msgs = [make_email(subject=s, body=b, msgid=f"<m{i}@x>") for i, (s, b) in enumerate(mails)]
    Importer(ctx.store, ctx.embedder).run([write_mbox(tmp_path / "box.mbox", msgs)])
    cache, kv_root = home / "cache" / "qa.db", home / "cache" / "kv"
    nodes_sql = "SELECT count(*) FROM jobs WHERE state = 'done' AND key LIKE 'chunk_kv:%'"

    def mid_write() -> bool:  # a node finished, the next one being written (or two finished)
        done = read_one(cache, nodes_sql) or 0
        return (done >= 1 and _writing(kv_root)) or done >= 2

    proc = cli(home, "precompute", "--for", "10m", stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while proc.poll() is None and not mid_write() and time.monotonic() < deadline:
        time.sleep(0.001)
    proc.send_signal(signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL
    assert integrity(cache) == []
    with closing(sqlite3.connect(cache)) as conn:
        assert blob_problems(conn, kv_root) == []
    finished = [k.split(":")[1] for k in _finished(cache) if k.startswith("chunk_kv:")]
    assert finished
    again = open_services(home)
    assert again.llm.path.name.startswith("qwen2.5-coder-1.5b")
    texts = [r.text for r in again.store.chunk_records([int(c) for c in finished])]
    assert all(again.prompt_cache().kv_cached([t]) for t in texts)
    again.kv.blobs.sweep_orphans(older_than=0)
    assert not _writing(kv_root)
    assert all(again.kv.blobs.get(k) is not None for k in _blob_keys(cache))


def _blob_keys(cache) -> list[str]:
    with closing(sqlite3.connect(cache)) as conn:
        return [r[0] for r in conn.execute("SELECT key FROM blobs")]
