"""What the CLI writes where stdout is not a UTF-8 terminal: a latin-1 or ASCII locale (text
whole but for the characters it lacks, JSON whole and valid), a pipe its reader closes."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from assistant.cli import main
from assistant.importing.importer import Importer
from assistant.services import open_services
from tests.conftest import REPO, FakeEmbedder, make_email, write_mbox


@pytest.fixture
def home(tmp_path):
    msgs = [
        make_email(
            "Planning – week 12",
            "The site visit moves to Thursday → 09:00 at the gate.",
            "Tomás Ferreira <tomas@x.nl>",
            msgid="<t@x>",
        ),
        *(make_email(f"Note {i}", f"Filler text {i}.", "Noor <noor@x.nl>") for i in range(4)),
    ]
    ctx = open_services(tmp_path / "h")
    Importer(ctx.store, FakeEmbedder()).run([write_mbox(tmp_path / "inbox.mbox", msgs)])
    return str(tmp_path / "h")


def ascii_stdout(monkeypatch, encoding: str = "ascii") -> io.BytesIO:
    raw = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(raw, encoding=encoding))
    return raw


def written(raw: io.BytesIO, encoding: str = "ascii") -> str:
    sys.stdout.flush()
    return raw.getvalue().decode(encoding)


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_text_on_a_stdout_that_is_not_utf8_replaces_what_it_cannot_hold(
    home, monkeypatch, encoding
):
    raw = ascii_stdout(monkeypatch, encoding)
    assert main(["show", "--home", home, "<t@x>"]) == 0
    assert main(["search", "--home", home, "--mode", "bm25", "site visit"]) == 0
    assert main(["people", "--home", home, "Tomas"]) == 0
    out = written(raw, encoding)
    assert "Subject: Planning ? week 12" in out and "Thursday ? 09:00" in out
    assert " 1. Tom" in out and "Tomas: one person" in out


def test_json_on_an_ascii_stdout_is_valid_and_whole(home, monkeypatch):
    raw = ascii_stdout(monkeypatch)
    assert main(["search", "--home", home, "--mode", "bm25", "--json", "site visit"]) == 0
    rows = json.loads(written(raw))
    assert rows[0]["sender"] == "Tomás Ferreira <tomas@x.nl>"
    assert rows[0]["subject"] == "Planning – week 12"
    raw = ascii_stdout(monkeypatch)
    assert main(["people", "--home", home, "--json", "Tomas"]) == 0
    assert json.loads(written(raw))["people"][0]["name"] == "Tomás Ferreira"


def test_help_on_an_ascii_stdout(monkeypatch):
    raw = ascii_stdout(monkeypatch)
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0 and "chat" in written(raw)


@pytest.mark.parametrize(
    "command",
    [["search", "--mode", "bm25", "--json", "site visit"], ["people", "--json", "Tomas"]],
)
def test_a_reader_that_stops_reading_gets_no_traceback(home, command):
    """`assistant search --json … | head -1`: the pipe closes before the output ends."""
    cmd = [sys.executable, "-m", "assistant.cli", command[0], "--home", home, *command[1:]]
    run = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    run.stdout.close()  # the reader is gone before a byte comes
    err = run.stderr.read().decode()
    assert run.wait(timeout=120) == 1
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


class CtrlCWhileImporting:
    """A finder that is Ctrl-C pressed while a command's modules load (the second after
    Enter, before the command runs)."""

    def find_spec(self, name, path=None, target=None):
        if name == "assistant.cli.commands":
            raise KeyboardInterrupt
        return None


def test_ctrl_c_while_the_command_loads_is_no_traceback(tmp_path, monkeypatch, capsys):
    monkeypatch.delitem(sys.modules, "assistant.cli.commands", raising=False)
    monkeypatch.setattr(sys, "meta_path", [CtrlCWhileImporting(), *sys.meta_path])
    try:
        code = main(["stats", "--home", str(tmp_path / "h")])
    except KeyboardInterrupt:  # caught here, or it would stop the test run
        pytest.fail("Ctrl-C came out of main: a traceback on the terminal")
    assert code == 130 and "interrupted" in capsys.readouterr().err
