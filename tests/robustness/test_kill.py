"""`kill -9` in the middle of `assistant import` and of `assistant ask`, then the same command
again: nothing lost, nothing twice, both databases intact, and the answer an uninterrupted run
gives. (Killing `assistant precompute` waits for that command.)

The killed commands run as processes of their own through tests/robustness/offline.py (sockets
refused, HF_HUB_OFFLINE unset: they also show that the app keeps itself offline); the reruns run
in this process, where the models are loaded already."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from assistant.answer.answerer import NO_CACHE
from assistant.cli import main
from assistant.importing.importer import Importer
from assistant.knowledge.encoder import INT8_SUFFIX
from assistant.services import open_services
from tests.conftest import REPO, FakeEmbedder, make_email, write_mbox
from tests.hostile import HostileMailbox, write_hostile_mailbox
from tests.robustness.checks import blob_problems, integrity, read_one
from tests.robustness.offline import ONLINE_HINTS

pytestmark = pytest.mark.slow


def cli(home: Path, command: str, *args: str, **popen) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ONLINE_HINTS}
    env["ASSISTANT_EMBEDDING_BATCH_SIZE"] = "8"  # several commits to kill between
    argv = [sys.executable, "-m", "tests.robustness.offline", command, "--home", str(home)]
    return subprocess.Popen([*argv, *args], cwd=REPO, env=env, text=True, **popen)


def kill_when(proc: subprocess.Popen, ready: Callable[[], bool], timeout: float = 240) -> None:
    """SIGKILL `proc` as soon as `ready()` holds (polled every 10 ms)."""
    deadline = time.monotonic() + timeout
    while proc.poll() is None:
        if ready():
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            return
        if time.monotonic() > deadline:
            proc.kill()
            break
        time.sleep(0.01)
    pytest.fail(f"the command ended (rc {proc.wait()}) before the moment it was to be killed")


# -- import ----------------------------------------------------------------------------------


def test_import_killed_while_reading_and_while_embedding_resumes_exactly(tmp_path, capsys):
    # enough mail that reading spans several of the importer's quarter-second batches: with 10
    # it was often stored in one, and the moment to kill it (some mail stored) never came
    box = write_hostile_mailbox(tmp_path / "mail", n_valid=80, huge_mb=4)
    home = tmp_path / "home"
    db = home / "knowledge.db"
    args = ["import", *map(str, box.paths)]

    def count(table: str) -> int:
        return read_one(db, f"SELECT count(*) FROM {table}") or 0

    kill_when(cli(home, *args), lambda: 0 < count("documents") < box.stored_count)
    assert 0 < count("documents") < box.stored_count and count("embeddings") == 0
    kill_when(cli(home, *args), lambda: count("embeddings") > 0)
    embedded, chunks = count("embeddings"), count("chunks")
    assert count("documents") == box.stored_count and 0 < embedded < chunks

    assert main([*args, "--home", str(home), "--json"]) == 0  # the rerun, in-process: faster
    report = json.loads(capsys.readouterr().out)
    assert (report["added"], report["embedded"]) == (0, chunks - embedded)
    assert integrity(db) == []
    assert_same_as_uninterrupted(db, box)
    assert main(["search", "--home", str(home), "--json", "-k", "3", "topic mb7 room 107"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["message_id"] == "mb7@hostile.test"


def assert_same_as_uninterrupted(db: Path, box: HostileMailbox) -> None:
    """Documents, chunks and vectors of a killed-and-rerun import are those of one clean run."""
    from assistant.knowledge.db import open_db
    from assistant.knowledge.store import KnowledgeStore

    clean = KnowledgeStore(open_db(None))
    Importer(clean, FakeEmbedder()).run(box.paths)
    resumed = KnowledgeStore(open_db(db))
    sql = (
        "SELECT d.source_key, c.ordinal, c.content_hash FROM chunks c "
        "JOIN documents d ON d.id = c.document_id ORDER BY 1, 2"
    )
    expected = clean.db.execute(sql).fetchall()
    assert resumed.db.execute(sql).fetchall() == expected
    keys = "SELECT source_key, content_hash FROM documents ORDER BY 1"
    assert resumed.db.execute(keys).fetchall() == clean.db.execute(keys).fetchall()
    vectors = resumed.db.execute(
        "SELECT model, count(*), count(DISTINCT chunk_id), min(dim), max(length(vector)) "
        "FROM embeddings GROUP BY model"
    ).fetchall()
    # one encoder's vectors, every chunk's: the one a new home gets ([embedding] backend "auto"),
    # which the resumed import kept
    assert vectors == [("all-MiniLM-L6-v2" + INT8_SUFFIX, len(expected), len(expected), 384, 1536)]


# -- ask -------------------------------------------------------------------------------------

MAILS = [
    ("Battery bug", "Priya found that the LoRa radio driver drains the battery in sleep mode."),
    ("Kitchen start", "Bram's crew begins demolition of the kitchen on Monday 2 March at 8:00."),
    ("Wedding", "Elin's wedding is in Uppsala on 8 August; Maya gives the speech."),
]
QUESTION = "Who found the battery bug in the radio driver?"


def test_ask_killed_mid_answer_gives_the_uninterrupted_answer_on_rerun(tmp_path, monkeypatch):
    # One llama.cpp thread: on a shared machine two wait on each other (prefill 15x slower).
    monkeypatch.setenv("ASSISTANT_LLM_N_THREADS", "1")
    monkeypatch.setenv("ASSISTANT_ANSWER_MAX_TOKENS", "24")
    monkeypatch.setenv("ASSISTANT_ANSWER_CONTEXT_CHUNKS", "2")
    home = tmp_path / "home"
    ctx = open_services(home)
    msgs = [make_email(subject=s, body=b, msgid=f"<m{i}@x>") for i, (s, b) in enumerate(MAILS)]
    Importer(ctx.store, ctx.embedder).run([write_mbox(tmp_path / "box.mbox", msgs)])
    reference = list(ctx.answerer().answer(QUESTION, NO_CACHE))[-1].answer
    assert reference

    proc = cli(home, "ask", "--json", QUESTION, stdout=subprocess.PIPE)
    for line in proc.stdout:  # killed at its first token: the prompt's KV is stored by then
        if json.loads(line)["event"] == "TokenStreamed":
            proc.send_signal(signal.SIGKILL)
            break
    assert proc.wait() == -signal.SIGKILL
    cache = home / "cache" / "qa.db"
    assert read_one(cache, "SELECT count(blob_key) FROM kv_nodes") == 3  # system + 2 chunks
    assert read_one(cache, "SELECT count(*) FROM qa_entries") == 0  # killed before it was added

    done = list(ctx.answerer().answer(QUESTION))[-1]  # the rerun, in-process: faster
    prefix = read_one(cache, "SELECT max(n_tokens) FROM kv_nodes WHERE depth = 3")
    assert done.kv_reused_tokens == prefix and done.answer == reference
    assert integrity(cache) == []
    with closing(sqlite3.connect(cache)) as conn:
        assert blob_problems(conn, home / "cache" / "kv") == []
    assert read_one(cache, "SELECT count(*) FROM qa_entries WHERE question = ?", (QUESTION,)) == 1
    again = list(ctx.answerer().answer(QUESTION))
    assert again[-1].qa_hit and again[-1].answer == reference
