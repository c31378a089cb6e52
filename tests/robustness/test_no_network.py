"""No network socket is opened by import, search, ask or precompute: the real models run under a
guard that refuses sockets and name lookups. (The CLI processes of test_kill.py run under the fatal
variant of the same guard, without HF_HUB_OFFLINE.)"""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest

from assistant.cli import main
from tests.conftest import DATA, REPO, make_email, write_mbox
from tests.robustness.offline import ATTEMPTED, ONLINE_HINTS, NetworkBlocked, NetworkGuard


@pytest.fixture
def guard(monkeypatch) -> NetworkGuard:
    return NetworkGuard().install(monkeypatch.setattr)


def test_the_guard_refuses_network_sockets_and_lookups(guard):
    with pytest.raises(NetworkBlocked):
        socket.create_connection(("127.0.0.1", 9))
    with pytest.raises(NetworkBlocked):
        socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    with pytest.raises(NetworkBlocked):
        socket.getaddrinfo("localhost", 80)
    a, b = socket.socketpair()  # local IPC is no network
    a.close()
    b.close()
    assert len(guard.attempts) == 3


def test_the_fatal_guard_ends_a_process_that_catches_the_error():
    code = (
        "from tests.robustness.offline import NetworkGuard; import socket\n"
        "NetworkGuard(fatal=True).install(setattr)\n"
        "try:\n    socket.create_connection(('127.0.0.1', 9))\nexcept Exception:\n    pass\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == ATTEMPTED and "network attempt blocked" in done.stderr


@pytest.mark.slow
def test_import_search_ask_and_precompute_open_no_socket(tmp_path, monkeypatch, capsys, guard):
    monkeypatch.setenv("ASSISTANT_LLM_N_THREADS", "1")  # two wait on each other on a busy machine
    monkeypatch.setenv("ASSISTANT_ANSWER_MAX_TOKENS", "16")
    monkeypatch.setenv("ASSISTANT_ANSWER_CONTEXT_CHUNKS", "2")
    box = write_mbox(
        tmp_path / "box.mbox",
        [make_email(subject="Radio", body="Priya found the battery bug in the LoRa driver.")],
    )
    home = str(tmp_path / "home")
    note = DATA / "notes" / "work" / "offsite-utrecht-agenda.txt"  # one: a chunk is a night's job
    assert main(["import", "--home", home, str(box), str(note)]) == 0
    capsys.readouterr()
    assert main(["search", "--home", home, "--json", "-k", "2", "battery bug"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["title"] == "Radio"
    assert main(["ask", "--home", home, "--json", "Who found the battery bug?"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert events[-1]["event"] == "AnswerDone" and events[-1]["answer"]
    monkeypatch.setenv("ASSISTANT_PRECOMPUTE_STRIDE", "3")
    assert main(["precompute", "--home", home, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["by_kind"].get("predict_detail") == 1 and report["failed"] == 0
    assert guard.attempts == []


@pytest.mark.slow
def test_the_int8_encoder_is_made_from_the_shipped_model_offline(
    tmp_path, monkeypatch, capsys, guard
):
    """On first use the int8 encoder is exported and quantised from the installed model, once,
    into the encoders folder: no download, no socket. The export runs in a child process, which
    runs under the fatal guard (installed by a sitecustomize before anything else is imported)."""
    encoders = tmp_path / "encoders"
    monkeypatch.setenv("ASSISTANT_EMBEDDING_ENCODERS_DIR", str(encoders))
    monkeypatch.setenv("ASSISTANT_EMBEDDING_BACKEND", "onnx-int8")
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "from tests.robustness.offline import NetworkGuard\n"
        "NetworkGuard(fatal=True).install(setattr)\n"
    )
    monkeypatch.setenv("PYTHONPATH", f"{site}:{REPO}")
    for hint in ONLINE_HINTS:  # the child sets HF_HUB_OFFLINE itself; nothing else may
        monkeypatch.delenv(hint, raising=False)
    probe = "import socket; socket.create_connection(('127.0.0.1', 9))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True)
    assert done.returncode == ATTEMPTED  # the children's guard is in place
    box = write_mbox(tmp_path / "box.mbox", [make_email(body="The tiles arrive Monday.")])
    home = str(tmp_path / "home")
    assert main(["import", "--home", home, "--json", str(box)]) == 0
    assert json.loads(capsys.readouterr().out)["embedded"] == 1
    assert sorted(p.name for p in encoders.rglob("*.onnx")) == ["model-int8.v4.onnx", "model.onnx"]
    made = {p: p.stat().st_mtime_ns for p in encoders.rglob("*.onnx")}
    assert main(["search", "--home", home, "--json", "tiles"]) == 0  # made once: reused
    assert {p: p.stat().st_mtime_ns for p in encoders.rglob("*.onnx")} == made
    assert guard.attempts == []
