"""Builds the retired torch query-likelihood reranker for the benches: its GGUF's weights exported
once into models_dir, its document KV in the blob store."""

from __future__ import annotations

import logging
from pathlib import Path

from assistant.config import Settings
from bench.ql.pruned import TorchQL
from bench.ql.torch_kv import TorchDocKV
from bench.ql.weights import WeightFile, export_weights
from cache.blobs import BlobStore

log = logging.getLogger(__name__)
EXPORT_FORMAT = "f16"  # float16 matrices (weights.py); bumped when the export changes
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # mallopt(3) parameters


def make_torch_ql(
    settings: Settings, models_dir: Path, blobs: BlobStore | None, resident_layers: int = 0
) -> TorchQL:
    """The torch QL reranker on `[reranker] model`'s GGUF; `resident_layers` stay loaded between
    questions (the rest stream through the window)."""
    import torch

    from assistant.llm.model_file import Vocab, model_fingerprint
    from assistant.rerank.models import resolve_model
    from assistant.rerank.prompt import QLTokens, get_prompt

    s = settings.reranker
    gguf = resolve_model(s.model, models_dir)
    weights = torch_weights(gguf, models_dir)
    if s.n_threads:
        torch.set_num_threads(s.n_threads)
    return_freed_memory()
    tokens = QLTokens(Vocab(gguf).tokenize, get_prompt(s.prompt), s.max_passage_tokens)
    doc_kv = None
    if blobs is not None:
        doc_kv = TorchDocKV(blobs, model_fingerprint(gguf), weights.arch.n_layers)
    return TorchQL(weights, tokens, resident_layers=resident_layers, doc_kv=doc_kv)


def torch_weights(gguf: Path, models_dir: Path) -> WeightFile:
    """The dequantized weights of `gguf` (exported once into models_dir, then read from there)."""
    from assistant.llm.model_file import model_fingerprint

    stem = f"{gguf.stem}-{model_fingerprint(gguf)}"
    path = models_dir / f"{stem}-{EXPORT_FORMAT}.safetensors"
    if not path.exists():
        log.info("exporting %s to %s for pruned reranking (once)", gguf, path)
        export_weights(gguf, path)
        (models_dir / f"{stem}.safetensors").unlink(missing_ok=True)  # the float32 format
    return WeightFile(path)


def return_freed_memory(threshold: int = 256 << 10) -> None:
    """glibc only: serve allocations above `threshold` from their own mappings, returned to the
    system when freed. By default glibc raises that threshold after large frees, so the layer
    window's and the activations' freed buffers stay in the heap and the process's RSS grows
    well past what the pruned forward holds at any one time."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        libc.mallopt(M_MMAP_THRESHOLD, threshold)
        libc.mallopt(M_TRIM_THRESHOLD, threshold)
    except (OSError, AttributeError, TypeError):
        pass  # not glibc: its allocator's own policy stands
