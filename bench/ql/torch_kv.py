"""Document-side KV for the torch reranker: a prefix's per-layer keys and values (float16,
safetensors bytes) in the blob store's doc_kv kind, keyed by the weights and the prefix tokens.
A blob that is missing, fails its checksum or does not decode reads as absent: recomputed."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import torch
from safetensors import SafetensorError
from safetensors.torch import load, save

from assistant.rerank.doc_kv import KIND, DocKV
from bench.ql.forward import KV
from cache.blobs import BlobStore

log = logging.getLogger(__name__)


class TorchDocKV(DocKV):
    tag = "torch"

    def __init__(self, blobs: BlobStore, model: str, n_layers: int) -> None:
        super().__init__(blobs, model)
        self.n_layers = n_layers

    def put(self, prefix: Sequence[int], layers: list[KV]) -> bool:
        tensors = {}
        for i, (k, v) in enumerate(layers):
            tensors[f"k{i}"] = k.to(torch.float16).contiguous()
            tensors[f"v{i}"] = v.to(torch.float16).contiguous()
        return self.blobs.put(KIND, self.key(prefix), save(tensors))

    def get(self, prefix: Sequence[int]) -> list[KV] | None:
        key = self.key(prefix)
        blob = self.blobs.get(key)  # checksum verified
        if blob is None:
            return None
        try:
            tensors = load(blob)
            layers = [(tensors[f"k{i}"], tensors[f"v{i}"]) for i in range(self.n_layers)]
        except (SafetensorError, KeyError, ValueError) as exc:
            log.warning("document KV %s does not decode (%s); recomputed", key, exc)
            self.blobs.delete(key)
            return None
        if any(k.shape[1] != len(prefix) for k, _ in layers):
            self.blobs.delete(key)
            return None
        return layers
