"""Cross-encoder reranking: a sentence-transformers CrossEncoder folder (the format of
ms-marco-MiniLM and bge-reranker) scores each (question, passage) pair with one logit.

`check_folder` tells a cross-encoder from what is not one (a GGUF, an embedding model, a folder
missing its weights or tokenizer) before anything loads, with the folder and what is missing in
the message. `CrossScorer` is the unpruned scorer (sentence-transformers does the forward);
grating.py is the pruned one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from assistant.config import ConfigError

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "sentencepiece.bpe.model")
BATCH = 8  # pairs per forward: `check` runs between batches


def is_folder(model: str) -> bool:
    """True when `[reranker] model` names a folder (a cross-encoder), not a GGUF or a name."""
    return Path(model).expanduser().is_dir()


def check_folder(model: str) -> dict:
    """The folder's config.json, after checking the folder holds a cross-encoder with one
    output (a relevance logit); raises ConfigError naming the folder and what is missing."""
    folder = Path(model).expanduser()
    fix = "set [reranker] model to a sentence-transformers CrossEncoder folder"
    if not folder.is_dir():
        raise ConfigError(f"{folder}: not a folder; {fix}")
    config_file = folder / "config.json"
    if not config_file.is_file():
        raise ConfigError(f"{folder}: no config.json, so not a transformers model; {fix}")
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{config_file}: not valid JSON ({exc}); {fix}") from exc
    heads = [
        a for a in config.get("architectures") or [] if a.endswith("ForSequenceClassification")
    ]
    if not heads:
        raise ConfigError(
            f"{folder}: not a cross-encoder: config.json architectures are "
            f"{config.get('architectures')} (a cross-encoder has a *ForSequenceClassification "
            f"head; an embedding model such as all-MiniLM-L6-v2 has none); {fix}"
        )
    labels = len(config.get("id2label") or {0: "LABEL_0"})
    if labels != 1:
        raise ConfigError(
            f"{folder}: the classifier has {labels} labels; a reranker needs one relevance "
            f"logit (num_labels = 1); {fix}"
        )
    _require(folder, WEIGHT_FILES, "weights", fix)
    _require(folder, TOKENIZER_FILES, "tokenizer", fix)
    return config


def _require(folder: Path, names: Sequence[str], what: str, fix: str) -> None:
    if not any((folder / n).is_file() for n in names):
        raise ConfigError(f"{folder}: no {what} file (one of {', '.join(names)}); {fix}")


class CrossScorer:
    """Every candidate through the whole cross-encoder; scores are the relevance logits."""

    def __init__(self, folder: str, max_length: int = 256, n_threads: int = 0) -> None:
        check_folder(folder)
        import torch
        from sentence_transformers import CrossEncoder

        if n_threads:
            torch.set_num_threads(n_threads)
        self.model = CrossEncoder(
            str(Path(folder).expanduser()),
            device="cpu",
            max_length=max_length,
            local_files_only=True,
            activation_fn=torch.nn.Identity(),
        )

    def scores(
        self,
        query: str,
        passages: Sequence[str],
        use_doc_kv: bool = True,
        check: Callable[[], None] | None = None,
    ) -> np.ndarray:
        """One logit per passage; `check()` runs before each batch (it may raise)."""
        out = []
        for start in range(0, len(passages), BATCH):
            if check is not None:
                check()
            pairs = [(query, p) for p in passages[start : start + BATCH]]
            out.append(self.model.predict(pairs, batch_size=BATCH, show_progress_bar=False))
        return np.concatenate(out) if out else np.zeros(0)

    def precompute(self, passages: Sequence[str], should_stop: Callable[[], bool]) -> int:
        """Nothing to keep per document: a cross-encoder reads question and passage together."""
        return 0
