"""A model file named by path that cannot be used is an LLMError naming the file and what to
do (the CLI prints it as `error: …`, exit 2), never a traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assistant.llm.model_file import LLMError, default_llm_model, model_fingerprint
from assistant.llm.runtime import LocalLLM


def unreadable(path: Path, monkeypatch) -> Path:
    """`path` made unreadable; where the tests run as root (who reads it anyway), its opening
    is refused here as the system refuses it to a user."""
    path.chmod(0)
    if os.access(path, os.R_OK):
        real_open = Path.open

        def denied(self, *args, **kwargs):
            if self == path:
                raise PermissionError(13, "Permission denied", str(self))
            return real_open(self, *args, **kwargs)

        monkeypatch.setattr(Path, "open", denied)
    return path


def test_an_unreadable_model_file_is_named_with_what_to_do(tmp_path, monkeypatch):
    """[models] writer = a GGUF the user cannot read (copied from another account, a root-only
    download): `assistant ask` stopped with a PermissionError traceback from the fingerprint."""
    path = tmp_path / "writer.gguf"
    path.write_bytes(default_llm_model().read_bytes()[: 2 << 20])
    unreadable(path, monkeypatch)
    with pytest.raises(LLMError) as caught:
        LocalLLM(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: cannot read the model file (Permission denied)")
    assert "chmod" in message and "assistant model" in message
    with pytest.raises(LLMError, match="cannot read the model file"):
        model_fingerprint(path)


def test_a_file_that_is_no_gguf_is_named_as_such(tmp_path):
    path = tmp_path / "notes.gguf"
    path.write_text("not a model\n")
    with pytest.raises(LLMError, match=f"{path}: not a loadable GGUF model"):
        LocalLLM(path).tokenize("hello")  # loaded when first used
