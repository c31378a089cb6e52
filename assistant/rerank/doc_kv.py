"""Document-side KV: the KV of a reranker prompt's passage prefix, one blob per (model, prefix
tokens), in the cache's blob store under its own kind and budget. A blob that is missing,
corrupt (checksum) or does not load into the model is reported absent: the caller recomputes."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from assistant.llm.runtime import LLMError, LocalLLM
from cache.blobs import BlobStore
from cache.kv_tree import segment_hash
from cache.room import unless_full

KIND = "doc_kv"
log = logging.getLogger(__name__)


class DocKV:
    tag = "doc"  # llama.cpp states; the torch reranker's tensors are another kind of blob

    def __init__(self, blobs: BlobStore, model: str) -> None:
        self.blobs = blobs
        self.model = model

    def key(self, prefix: Sequence[int]) -> str:
        return f"{self.model}-{self.tag}-{segment_hash(prefix)}"

    def has(self, prefix: Sequence[int]) -> bool:
        return self.blobs.has(self.key(prefix))

    def restore(self, llm: LocalLLM, prefix: Sequence[int]) -> bool:
        """Load the prefix's KV into `llm` (True), or leave it reset (False: not cached)."""
        key = self.key(prefix)
        blob = self.blobs.get(key)  # checksum verified
        if blob is None:
            return False
        try:
            llm.restore_ranges([blob], prefix)
        except LLMError as exc:
            log.warning("document KV %s does not load (%s); recomputed", key, exc)
            self.blobs.delete(key)
            return False
        return True

    @unless_full("the reranker's document KV", db=lambda kv: kv.blobs.db)
    def compute(self, llm: LocalLLM, prefix: Sequence[int]) -> None:
        """Prefill the prefix into `llm` and keep its KV."""
        llm.reset()
        llm.eval(prefix)
        self.blobs.put(KIND, self.key(prefix), llm.save_range(0, len(prefix)))

    def load(self, llm: LocalLLM, prefix: Sequence[int]) -> bool:
        """The prefix in `llm`'s context, restored if cached, else computed and kept.
        Returns True on a cache hit."""
        if self.restore(llm, prefix):
            return True
        self.compute(llm, prefix)
        return False
