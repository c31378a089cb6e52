"""An Answerer over parts a test builds itself (its own store, model and cache database), wired
from the real classes as services.py wires them."""

from __future__ import annotations

from pathlib import Path

from assistant.answer.answerer import Answerer
from assistant.answer.evidence import LineFinder
from assistant.answer.judge import same_check
from assistant.answer.qa_memory import QAMemory
from assistant.answer.qa_verify import HitVerifier
from assistant.config import Settings
from assistant.knowledge.retrieval import Retriever
from assistant.knowledge.store import KnowledgeStore
from assistant.kv.prompt_cache import PromptCache
from assistant.llm.runtime import LocalLLM
from assistant.mail.reader import QueryReader
from assistant.rerank.reranker import Reranker
from assistant.rerank.selection import Selection
from cache.blobs import BlobStore
from cache.db import open_cache_db
from cache.kv_tree import KIND, KVTree
from cache.protocols import Embedder
from cache.qa_bank import QABank


def answerer_over(
    store: KnowledgeStore,
    embedder: Embedder,
    llm: LocalLLM,
    kv_dir: Path,
    settings: Settings | None = None,
    system_prompt: str = "",
    *,
    threshold: float = 0.9,
    candidate_threshold: float | None = None,
    reranker: Reranker | None = None,
    retriever: Retriever | None = None,
    reader: QueryReader | None = None,
    judge=None,
) -> Answerer:
    """An Answerer over `store` with a fresh in-memory cache database (QA bank at `threshold`,
    KV tree with its blobs under `kv_dir`); `reader` reads filters from a question (step 2)."""
    db = open_cache_db(None)
    qa = QABank(db, threshold, 1 << 20, candidate_threshold=candidate_threshold)
    kv = KVTree(db, BlobStore(db, kv_dir, {KIND: 1 << 30}), llm.fingerprint)
    settings = settings or Settings()
    select = Selection(settings, retriever or Retriever(store, embedder, None), reranker)
    cache = PromptCache(settings, llm, kv, system_prompt, embedder)
    same = same_check(judge) if judge is not None else None
    verifier = HitVerifier(select.retriever, settings.cache, same=same)
    memory = QAMemory(store, qa, embedder, select, verifier)
    lines = LineFinder(embedder, None)
    return Answerer(settings, store, embedder, select, cache, memory, lines, reader=reader,
                    judge=judge)  # fmt: skip
