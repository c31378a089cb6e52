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


def test_the_kv_name_changes_with_the_llama_cpp_build_and_the_files_fingerprint_does_not(
    monkeypatch,
):
    """KV nodes and the reader's instruction file, named by the model alone, were restored into
    whatever llama.cpp was installed: an upgrade that computes other values (kernels, rope,
    quantisation) in the same state format reused the old KV and changed answers without a
    word. The build is now part of the name; the model's own fingerprint, which names its f16
    copy (llm/weights.py), stays: an upgrade does not copy the weights again."""
    from assistant.llm import model_file

    path = default_llm_model()
    before, file = LocalLLM(path).fingerprint, model_fingerprint(path)
    monkeypatch.setattr(model_file, "llama_cpp_build", lambda: "0.3.99 rebuilt-libllama")
    after = LocalLLM(path).fingerprint
    assert after != before
    assert after.partition("@")[0] == before.partition("@")[0] == model_fingerprint(path, 4096)
    assert model_fingerprint(path) == file


def test_the_build_is_read_from_the_packages_metadata_without_importing_llama_cpp():
    """The fingerprint is computed as a command starts (a one-shot `ask` the QA bank answers
    loads no model): importing llama_cpp there would cost that start its time."""
    import importlib.metadata
    import subprocess
    import sys

    code = (
        "import sys; from assistant.llm.model_file import llama_cpp_build;"
        "print(llama_cpp_build()); print('llama_cpp' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    build, imported = out.stdout.splitlines()
    assert build.split()[0] == importlib.metadata.version("llama-cpp-python")
    assert len(build.split()) > 1  # and its libraries' sha256, as pip recorded them
    assert imported == "False"
