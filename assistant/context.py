"""Builds what a command or the TUI works with — home, settings, store, models — from one place.

Threading model (the app: the Textual thread, its workers, the idle scheduler's thread):
- One model lock (`LocalLLM.lock`) serialises use of the LLM; a user question pre-empts
  background work within one piece (activity.py's busy markers, checked between pieces).
- One connection per database, shared by every thread of the process: Python's sqlite3 is
  built serialized, so each statement is atomic; the only multi-statement transactions are
  an import's (KnowledgeStore, one import at a time) and the job queue's claim (one precompute
  pass at a time, below). Other processes on the home use their own connections (WAL).
- One precompute pass at a time per process (`precompute_lock`): the cache screen's `p` waits
  for an idle pass to stop; an idle pass does not start while another runs.
- Widgets are touched only from the Textual thread; workers post messages.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import assistant
from assistant.activity import Activity
from assistant.config import Settings, load_settings
from assistant.home import Home, open_home
from assistant.knowledge.db import open_db
from assistant.knowledge.embeddings import SentenceTransformerEmbedder, make_embedder
from assistant.knowledge.retrieval import Retriever
from assistant.knowledge.store import KnowledgeStore

if TYPE_CHECKING:
    from assistant.pipeline import Pipeline
    from assistant.rerank.reranker import Reranker
    from assistant.rerank.selfcheck import RerankCheck
    from cache.blobs import BlobStore


@dataclass
class Context:
    home: Home
    settings: Settings
    store: KnowledgeStore
    _embedder: SentenceTransformerEmbedder | None = field(default=None, repr=False)
    _retriever: Retriever | None = field(default=None, repr=False)
    _pipeline: Pipeline | None = field(default=None, repr=False)
    _presence: Activity | None = field(default=None, repr=False)
    _reranker: Reranker | None = field(default=None, repr=False)
    # held by the precompute pass that is running (the idle one or the one the user asked for)
    precompute_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def presence(self) -> Activity:
        """The user's activity, shared with other processes on this home."""
        if self._presence is None:
            self._presence = Activity(self.home.root)
        return self._presence

    def activity(self) -> None:
        """The user did something (the app calls this on every keypress)."""
        self.presence.touch()

    @property
    def embedder(self) -> SentenceTransformerEmbedder:
        if self._embedder is None:
            self._embedder = make_embedder(self.settings.embedding)
        return self._embedder

    def pipeline(self) -> Pipeline:
        if self._pipeline is None:
            self._pipeline = make_pipeline(self)
        return self._pipeline

    @property
    def retriever(self) -> Retriever:
        if self._retriever is None:
            self._retriever = Retriever(
                self.store, self.embedder, self.home.index_dir, self.settings.retrieval
            )
        return self._retriever

    @property
    def reranker(self) -> Reranker:
        if self._reranker is not None:
            return self._reranker
        from cache.db import open_cache_db

        return self.reranker_on(cache_blobs(self, open_cache_db(self.home.cache_dir / "qa.db")))

    def rerank_check(self) -> RerankCheck:
        """The nightly reranker self-check's probes and result (`rerank = "auto"`)."""
        from assistant.rerank.selfcheck import RerankCheck

        return RerankCheck(self.home.cache_dir / "rerank_check.json")

    def reranker_on(self, blobs: BlobStore) -> Reranker:
        """The reranker, made (once) with its document KV in `blobs` (the pipeline's store)."""
        if self._reranker is None:
            from assistant.rerank.loader import make_reranker

            check = self.rerank_check()
            self._reranker = make_reranker(
                self.settings, self.home.models_dir, blobs, decide=check.chosen
            )
        return self._reranker


def cache_blobs(ctx: Context, db) -> BlobStore:
    """The KV blob store: KV-tree nodes and the reranker's document KV, each with its budget."""
    from assistant.rerank.doc_kv import KIND as DOC_KV
    from cache.blobs import BlobStore
    from cache.kv_tree import KIND

    budgets = {
        KIND: int(ctx.settings.cache.kv_budget_mb * 2**20),
        DOC_KV: int(ctx.settings.reranker.doc_kv_budget_mb * 2**20),
    }
    return BlobStore(db, ctx.home.cache_dir / "kv", budgets)


def open_context(home: Path | str | None = None) -> Context:
    h = open_home(home)
    settings = load_settings(h.config_file)
    return Context(home=h, settings=settings, store=KnowledgeStore(open_db(h.knowledge_db)))


def make_pipeline(ctx: Context) -> Pipeline:
    from assistant.llm import make_llm
    from assistant.pipeline import Pipeline
    from cache.db import open_cache_db
    from cache.kv_tree import KVTree
    from cache.prediction import History
    from cache.qa_bank import QABank

    cache = ctx.settings.cache
    db = open_cache_db(ctx.home.cache_dir / "qa.db")
    blobs = cache_blobs(ctx, db)
    llm = make_llm(ctx.settings.llm)
    system = (bundled("prompts") / "answer.txt").read_text(encoding="utf-8")
    return Pipeline(
        ctx.settings,
        ctx.store,
        ctx.embedder,
        ctx.retriever,
        llm,
        QABank(
            db, cache.qa_threshold, int(cache.qa_budget_mb * 2**20), cache.qa_candidate_threshold
        ),
        KVTree(db, blobs, llm.fingerprint),
        system,
        activity=ctx.presence,
        history=History(db),
        reranker=ctx.reranker_on(blobs),
    )


def bundled(name: str) -> Path:
    """A folder shipped with the app (`data`, `prompts`): in the wheel, or in the source tree."""
    package = Path(assistant.__file__).parent
    for candidate in (package / "_bundled" / name, package.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"the {name}/ folder is not installed with the app ({package})")
