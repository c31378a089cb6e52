"""An encoder that cannot be had (its model folder missing, its one-off export failing) does not
cost the import: every message is read and stored, the report names the file and what to do,
and once it is fixed `assistant import` embeds what was stored. Nothing is lost."""

from __future__ import annotations

import json

import pytest

from assistant.cli import main
from tests.conftest import make_email, write_mbox
from tests.robustness.checks import read_one

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("broken", ["model folder", "encoders folder"])
def test_an_import_without_its_encoder_stores_every_message_and_says_what_to_do(
    broken, tmp_path, monkeypatch, capsys
):
    home = tmp_path / "home"
    box = write_mbox(
        tmp_path / "in.mbox",
        [make_email(subject=f"tiles {i}", body=f"Batch {i} of tiles.", msgid=f"<t{i}@x>")
         for i in range(3)],
    )  # fmt: skip
    if broken == "model folder":
        monkeypatch.setenv("ASSISTANT_EMBEDDING_MODEL_PATH", str(tmp_path / "no-model"))
        named = str(tmp_path / "no-model")
    else:  # a file where the encoders folder should be: the export cannot write
        (tmp_path / "encoders").write_text("not a folder")
        monkeypatch.setenv("ASSISTANT_EMBEDDING_ENCODERS_DIR", str(tmp_path / "encoders"))
        named = str(tmp_path / "encoders")

    missing = tmp_path / "no-such.mbox"  # a path with its own error, read before embedding
    assert main(["import", "--home", str(home), "--json", str(box), str(missing)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["added"] == 3 and report["embedded"] == 0
    assert [i["path"] for i in report["errors"]] == ["[embedding]", str(missing)]
    issue = report["errors"][0]  # first, where the app's import screen (three shown) has it
    assert named in issue["reason"] and "`assistant import` embeds them" in issue["reason"]
    db = home / "knowledge.db"
    assert read_one(db, "SELECT count(*) FROM documents") == 3
    chunks = read_one(db, "SELECT count(*) FROM chunks")
    assert chunks >= 3 and read_one(db, "SELECT count(*) FROM embeddings") == 0

    monkeypatch.delenv("ASSISTANT_EMBEDDING_MODEL_PATH", raising=False)  # fixed
    monkeypatch.delenv("ASSISTANT_EMBEDDING_ENCODERS_DIR", raising=False)
    assert main(["import", "--home", str(home), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["embedded"] == chunks and report["errors"] == []
    assert read_one(db, "SELECT count(*) FROM documents") == 3
