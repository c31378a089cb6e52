"""An Answerer over parts a test builds itself (its own store, model and cache database), wired
from the real classes as services.py wires them."""


from __future__ import annotations

from pathlib import Path

from assistant.activity import Activity
from assistant.answer.answerer import Answerer
from assistant.answer.evidence import LineFinder
from assistant.answer.qa_memory import QAMemory
from assistant.answer.qa_verify import HitVerifier
from assistant.config import Settings
from assistant.knowledge.retrieval import Retriever
from assistant.knowledge.store import KnowledgeStore
from assistant.llm.runtime import LocalLLM
from assistant.prompt_cache import PromptCache
from assistant.rerank.reranker import Reranker
from assistant.rerank.selection import Selection
from cache.blobs import BlobStore
from cache.db import open_cache_db
from cache.kv_tree import KIND, KVTree
from cache.prediction import History
from cache.protocols import Embedder
from cache.qa_bank import QABank
from cache.sentences import SentenceVectors


def assemble(
    settings: Settings,
    store: KnowledgeStore,
    embedder: Embedder,
    retriever: Retriever,
    llm: LocalLLM,
    qa: QABank,
    kv: KVTree,
    system_prompt: str,
    *,
    reranker: Reranker | None = None,
    sentences: SentenceVectors | None = None,
    activity: Activity | None = None,
    history: History | None = None,
) -> Answerer:
    """Its selection, PromptCache and QA memory are made here, as services.py makes them."""
    select = Selection(settings, retriever, reranker)
    cache = PromptCache(settings, llm, kv, system_prompt, embedder, activity)
    memory = QAMemory(store, qa, embedder, select, HitVerifier(retriever, settings.cache))
    lines = LineFinder(embedder, sentences)
    return Answerer(settings, store, embedder, select, cache, memory, lines, activity, history)


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
) -> Answerer:
    """An Answerer over `store` with a fresh in-memory cache database (QA bank at `threshold`,
    KV tree with its blobs under `kv_dir`)."""
    db = open_cache_db(None)
    qa = QABank(db, threshold, 1 << 20, candidate_threshold=candidate_threshold)
    kv = KVTree(db, BlobStore(db, kv_dir, {KIND: 1 << 30}), llm.fingerprint)
    retriever = Retriever(store, embedder, None)
    settings = settings or Settings()
    return assemble(
        settings, store, embedder, retriever, llm, qa, kv, system_prompt, reranker=reranker
    )
