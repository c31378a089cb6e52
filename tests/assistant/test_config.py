from __future__ import annotations

import pytest

from assistant.config import ConfigError, load_settings
from assistant.home import open_home


def test_defaults_then_file_then_env(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[retrieval]\ntop_k = 5\nrrf_k = 30\n[llm]\nmodel_path = "/m.gguf"\n')
    settings = load_settings(cfg, env={"ASSISTANT_RETRIEVAL_TOP_K": "7"})
    assert settings.retrieval.top_k == 7
    assert settings.retrieval.rrf_k == 30
    assert settings.llm.model_path == "/m.gguf"
    assert settings.chunking.target_tokens == 200


@pytest.mark.parametrize(
    "text, message",
    [
        ("[retrieval\n", "not valid TOML"),
        ("[nope]\nx = 1\n", "unknown section"),
        ("[retrieval]\ntopk = 1\n", "unknown key retrieval.topk"),
        ('[retrieval]\ntop_k = "many"\n', "expected int"),
        ('[answer]\nduplicates = "hide"\n', "answer.duplicates: expected one of merge, keep"),
    ],
)
def test_bad_config_names_file_and_key(tmp_path, text, message):
    cfg = tmp_path / "config.toml"
    cfg.write_text(text)
    with pytest.raises(ConfigError, match=message) as err:
        load_settings(cfg, env={})
    assert str(cfg) in str(err.value)


def test_home_is_private(tmp_path):
    home = open_home(tmp_path / "h")
    assert (home.root.stat().st_mode & 0o777) == 0o700
    assert (home.index_dir.stat().st_mode & 0o777) == 0o700


def test_home_from_env(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSISTANT_HOME", str(tmp_path / "envhome"))
    assert open_home().root == tmp_path / "envhome"


def test_rerank_switch_from_file_then_env(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('rerank = "full"\n[reranker]\ncandidates = 30\nmodel = "smollm2-135m"\n')
    settings = load_settings(cfg, env={})
    assert settings.rerank == "full"
    assert settings.reranker.candidates == 30 and settings.reranker.model == "smollm2-135m"
    env = {"ASSISTANT_RERANK": "cross-pruned", "ASSISTANT_RERANKER_CROSS_THRESHOLD": "0.25"}
    settings = load_settings(cfg, env=env)
    assert settings.rerank == "cross-pruned" and settings.reranker.cross_threshold == 0.25
    assert load_settings(None, env={}).rerank == "auto"


def test_a_bad_rerank_switch_is_a_clear_error(tmp_path):
    expected = "rerank: expected one of off, full, cross, cross-pruned, auto"
    with pytest.raises(ConfigError, match=expected):
        load_settings(None, env={"ASSISTANT_RERANK": "fast"})
