"""The model's weights for fast prompts (llm/weights.py): the shipped Q4_1 model is copied once to
f16 where the CPU has llama.cpp's fast prompt kernels, the copy is the same model (its vocabulary
and chat template), and what cannot be copied is loaded as given."""

from __future__ import annotations

import logging
import os

import pytest

from assistant.config import ConfigError, Settings, load_settings
from assistant.llm import make_llm
from assistant.llm.model_file import LLMError, Vocab, default_llm_model
from assistant.llm.runtime import LocalLLM
from assistant.llm.weights import F16, FAST_TYPES, fast_kernels, model_facts, prompt_weights

TEXT = "Sherri: Jeff suggests you speak to Lou Pai, Chairman & CEO of EES; 713.853.5646."


@pytest.fixture(scope="module")
def copied(tmp_path_factory):
    where = tmp_path_factory.mktemp("weights")
    return where, prompt_weights(default_llm_model(), "auto", where)


def test_the_shipped_model_is_copied_once_to_f16_where_the_cpu_has_the_fast_kernels(copied):
    where, path = copied
    source = default_llm_model()
    assert model_facts(source)[0] not in FAST_TYPES  # the shipped Q4_1
    if not fast_kernels():
        assert path == source and [p.suffix for p in where.iterdir()] == [".as-is"]
        return
    assert path.parent == where and path.name.endswith(".f16.gguf")
    assert model_facts(path) == (F16, model_facts(source)[1])
    made = path.stat().st_mtime_ns
    assert prompt_weights(source, "auto", where) == path  # found again, not written again
    assert path.stat().st_mtime_ns == made
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_the_copy_is_the_same_model_its_vocabulary_and_chat_template_kept(copied):
    _, path = copied
    source = default_llm_model()
    assert Vocab(path).tokenize(TEXT, first=True) == Vocab(source).tokenize(TEXT, first=True)
    ours, theirs = LocalLLM(path, n_ctx=256, n_threads=1), LocalLLM(source, n_ctx=256, n_threads=1)
    assert ours.chat_template == theirs.chat_template and ours.chat_template


def test_as_is_keeps_the_file_and_a_fast_type_is_not_copied_again(copied, tmp_path):
    where, path = copied
    source = default_llm_model()
    assert prompt_weights(source, "as-is", tmp_path) == source
    assert not list(tmp_path.iterdir())
    # a model already in a fast type (the copy itself) is loaded as it is, decided once
    assert prompt_weights(path, "auto", tmp_path) == path
    assert [p.suffix for p in tmp_path.iterdir()] == [".as-is"]
    with pytest.raises(LLMError, match="llm.weights"):
        prompt_weights(source, "fast", tmp_path)


def test_a_file_that_is_no_model_is_left_for_the_load_to_report(tmp_path):
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + os.urandom(64))
    where = tmp_path / "models"
    assert prompt_weights(broken, "auto", where) == broken
    assert not where.exists()
    missing = tmp_path / "missing.gguf"
    assert prompt_weights(missing, "auto", where) == missing


@pytest.mark.skipif(not fast_kernels(), reason="no copy is made without the fast kernels")
def test_a_copy_that_cannot_be_written_leaves_the_shipped_file_in_use(tmp_path, caplog):
    where = tmp_path / "a-file"  # where the cache's folder should be (a full disk fails alike)
    where.write_text("")
    with caplog.at_level(logging.WARNING):
        assert prompt_weights(default_llm_model(), "auto", where) == default_llm_model()
    assert "could not be written" in caplog.text and str(where) in caplog.text


def test_make_llm_loads_the_file_as_given_unless_told_auto(tmp_path, monkeypatch):
    monkeypatch.setattr("assistant.llm.weights.default_weights_dir", lambda: tmp_path)
    settings = Settings().llm
    assert make_llm(settings).path == default_llm_model()
    assert not list(tmp_path.iterdir())
    settings.weights = "auto"
    assert make_llm(settings).path == prompt_weights(default_llm_model(), "auto", tmp_path)


def test_an_unknown_weights_value_is_a_config_error(tmp_path):
    (tmp_path / "config.toml").write_text('[expert.llm]\nweights = "fast"\n')
    with pytest.raises(ConfigError, match="llm.weights"):
        load_settings(tmp_path / "config.toml", env={})
