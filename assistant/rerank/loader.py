"""Builds the reranker from settings: which GGUF, where its torch weights and document KV live.
Nothing loads until the reranker first runs (the factories are called lazily)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from assistant.config import ConfigError, Settings
from assistant.rerank.cross import check_folder, is_folder
from assistant.rerank.reranker import Reranker
from cache.blobs import BlobStore

log = logging.getLogger(__name__)
N_CTX = 2048  # a passage prefix (≤ max_passage_tokens + a few) plus instruction and question


def make_reranker(
    settings: Settings,
    models_dir: Path,
    blobs: BlobStore,
    decide: Callable[[Sequence[str]], str] | None = None,
) -> Reranker:
    """`blobs` must have a budget for the doc_kv kind (factories.cache_blobs gives it one).
    `[reranker] model` a folder: the cross-encoder modes; else the query-likelihood ones.
    `decide`: what the self-check turned on (for `rerank = "auto"`)."""
    check_mode(settings)
    s = settings.reranker
    if is_folder(s.model):
        return Reranker(
            settings.rerank, s, cross=lambda: make_cross(settings),
            cross_pruned=lambda: make_cross_pruned(settings), decide=decide,
        )  # fmt: skip

    def full():
        from assistant.llm.runtime import LocalLLM
        from assistant.rerank.doc_kv import DocKV
        from assistant.rerank.models import resolve_model
        from assistant.rerank.prompt import get_prompt
        from assistant.rerank.scorer import QLScorer

        llm = LocalLLM(resolve_model(s.model, models_dir), n_ctx=N_CTX, n_threads=s.n_threads)
        doc_kv = DocKV(blobs, llm.fingerprint)
        return QLScorer(llm, get_prompt(s.prompt), doc_kv, s.max_passage_tokens)

    return Reranker(settings.rerank, s, full=full, decide=decide)


def check_mode(settings: Settings) -> None:
    """A mode that cannot run on `[reranker] model` is a config error, said before any load."""
    s, mode = settings.reranker, settings.rerank
    if mode in ("cross", "cross-pruned"):
        check_folder(s.model)
    elif mode == "full" and is_folder(s.model):
        raise ConfigError(
            f"{s.model}: rerank = {mode!r} is query likelihood on a GGUF, but [reranker] model "
            'is a folder; for a cross-encoder folder use rerank = "cross" or "cross-pruned"'
        )


def make_cross(settings: Settings):
    from assistant.rerank.cross import CrossScorer

    s = settings.reranker
    return CrossScorer(s.model, s.cross_max_length, s.n_threads)


def make_cross_pruned(settings: Settings):
    import torch

    from assistant.rerank.bert import native_bf16
    from assistant.rerank.grating import CrossPruned

    s = settings.reranker
    if s.n_threads:
        torch.set_num_threads(s.n_threads)
    resident = None if s.cross_resident_layers < 0 else s.cross_resident_layers
    bf16 = s.cross_bf16 and native_bf16()
    return CrossPruned(
        s.model, s.cross_max_length, resident_layers=resident, bf16=bf16,
        packed_rows=s.cross_packed_rows,
    )  # fmt: skip
