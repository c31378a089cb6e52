from __future__ import annotations

import json
import subprocess
import sys

import pytest

from assistant.cli import main
from tests.conftest import DATA, make_email, write_mbox


def test_help_is_instant_and_imports_no_model_code():
    code = (
        "import sys; from assistant.cli import build_parser; build_parser().format_help();"
        "heavy = {'torch', 'sentence_transformers', 'llama_cpp', 'textual', 'numpy'};"
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_bad_path_is_a_clear_error(tmp_path, capsys):
    assert main(["import", "--home", str(tmp_path / "h"), str(tmp_path / "nothing")]) == 1
    assert "no such file or folder" in capsys.readouterr().err


def test_corrupt_database_names_the_file(tmp_path, capsys):
    home = tmp_path / "h"
    home.mkdir()
    (home / "knowledge.db").write_bytes(b"this is not sqlite" * 100)
    assert main(["stats", "--home", str(home)]) == 2
    err = capsys.readouterr().err
    assert "knowledge.db" in err and "Move it aside" in err


@pytest.mark.slow
def test_import_search_stats_json_with_the_real_embedder(tmp_path, capsys):
    box = write_mbox(
        tmp_path / "box.mbox",
        [
            make_email(
                subject="Kitchen", body="Demolition starts on Monday 2 March.", msgid="<k@x>"
            ),
            make_email(subject="Race", body="My half marathon time was 1:52:10.", msgid="<r@x>"),
        ],
    )
    home = str(tmp_path / "h")
    assert main(["import", "--home", home, str(box), str(DATA / "notes" / "work")]) == 0
    capsys.readouterr()
    assert main(["search", "--home", home, "--json", "-k", "3", "when does demolition start"]) == 0
    results = json.loads(capsys.readouterr().out)
    top = results[0]
    assert top["message_id"] == "k@x" and top["subject"] == "Kitchen"
    assert {"rank", "score", "date", "sender", "text", "note_path", "title"} <= set(top)
    assert main(["stats", "--home", home, "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["emails"] == 2 and stats["notes"] >= 10
    assert stats["embedded_chunks"] == stats["chunks"] > 0
