"""open_services(home, settings) → Services: every part a command or the TUI works with, built
once, on first use, whichever thread asks first — each SQLite database opened once (the
knowledge bank, the cache database), one BlobStore, one LocalLLM, one embedder, one Retriever,
one reranker, one Selection, one PromptCache, one Answerer. Models load lazily inside their
parts (the LLM when the KV tree or the PromptCache is first built, the embedder on first embed).

Threading model (the app: the Textual thread, its workers, the idle scheduler's thread):
- One model lock (`LocalLLM.lock`) serialises use of the LLM; a user question pre-empts
  background work within one piece (activity.py's busy markers, checked between pieces).
- One connection per database, shared by every thread of the process (the TUI's import
  worker excepted: it writes the knowledge bank on a connection of its own, tui/backend.py, so
  the chat never reads a half-written batch). One writer lock per database file (cache/db.py:
  `transaction`, `write`), held by every transaction that writes, even a single statement:
  threads never interleave transactions on a shared connection, nor does one thread's
  statement land in another's transaction (tests/robustness/test_two_writers.py). Other
  processes on the home use their own connections: SQLite's lock, WAL and the busy timeout.
- One precompute pass at a time per process (`precompute_lock`), and per home across processes
  (precompute/home_lock.py: the night's timer and the app): the cache screen's `p` waits for
  an idle pass to stop; an idle pass does not start while another runs. A user question
  during either waits only for the model lock (tests/assistant/test_precompute_together.py).
- Parts are built under one re-entrant lock (`_building`), so two threads asking at once get
  the same part (tests/assistant/test_services.py).
- Widgets are touched only from the Textual thread; workers post messages.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from assistant.config import Settings, load_settings
from assistant.factories import (
    cache_blobs,
    make_answerer,
    make_judge,
    make_lines,
    make_prompt_cache,
    make_writer,
)
from assistant.home import Home, open_home
from assistant.knowledge.db import DatabaseError, open_db
from assistant.knowledge.embeddings import SentenceTransformerEmbedder, make_embedder
from assistant.knowledge.retrieval import Retriever
from assistant.knowledge.shipped import ModelMissing
from assistant.knowledge.store import KnowledgeStore
from assistant.mail import thread_update
from assistant.precompute.activity import Activity
from cache.budget import held_bytes, kv_budget

if TYPE_CHECKING:
    from sqlite_utils import Database

    from assistant.answer.answerer import Answerer
    from assistant.answer.evidence import LineFinder
    from assistant.answer.judge import Reader
    from assistant.answer.qa_memory import QAMemory
    from assistant.importing.importer import Importer
    from assistant.kv.prompt_cache import PromptCache
    from assistant.llm.runtime import LocalLLM
    from assistant.mail.reader import QueryReader
    from assistant.precompute.parts import PrecomputeParts
    from assistant.rerank.reranker import Reranker
    from assistant.rerank.selection import Selection
    from assistant.rerank.selfcheck import RerankCheck
    from cache.blobs import BlobStore
    from cache.kv_tree import KVTree
    from cache.qa_bank import QABank

T = TypeVar("T")
LINE_WEIGHTS = "line_weights.json"  # a home's own fit of the line scorer (answer/fit.py)
CACHE_DB = "qa.db"  # the cache database: QA bank, KV tree, jobs, blobs (cache/db.py)


@dataclass
class Services:
    """Each part is built on first use, once, whichever thread asks first (the UI's workers and
    the idle scheduler share one Services): one cache database connection, one BlobStore (the KV
    tree's and the reranker's document KV), one embedder, retriever, reranker, LLM, QA bank,
    KV tree, selection, PromptCache and Answerer."""

    home: Home
    settings: Settings
    store: KnowledgeStore
    _embedder: SentenceTransformerEmbedder | None = field(default=None, repr=False)
    _retriever: Retriever | None = field(default=None, repr=False)
    _llm: LocalLLM | None = field(default=None, repr=False)
    _qa: QABank | None = field(default=None, repr=False)
    _kv: KVTree | None = field(default=None, repr=False)
    _selection: Selection | None = field(default=None, repr=False)
    _memory: QAMemory | None = field(default=None, repr=False)
    _prompt_cache: PromptCache | None = field(default=None, repr=False)
    _answerer: Answerer | None = field(default=None, repr=False)
    _lines: LineFinder | None = field(default=None, repr=False)
    _presence: Activity = field(init=False, repr=False)  # made at once: the UI thread uses it
    _reranker: Reranker | None = field(default=None, repr=False)
    _cache_db: Database | None = field(default=None, repr=False)
    _blobs: BlobStore | None = field(default=None, repr=False)
    _reader: QueryReader | None = field(default=None, repr=False)
    _judge: Reader | None = field(default=None, repr=False)
    # why the configured reader (writer) model is not the one used ("" when it is): told to
    # the user
    reader_note: str = ""
    writer_note: str = ""
    # held by the precompute pass that is running (the idle one or the one the user asked for)
    precompute_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    kv_budget_auto: bool = False  # the KV budget was sized from the free disk (cache/budget.py)
    # held while a part is built: a part built from others (the answerer) builds them inside
    _building: threading.RLock = field(default_factory=threading.RLock, repr=False)

    def __post_init__(self) -> None:
        self._presence = Activity(self.home.root)

    def _once(self, name: str, build: Callable[[], T]) -> T:
        """The part in attribute `name`, built by `build` if it is not there yet."""
        with self._building:
            if getattr(self, name) is None:
                setattr(self, name, build())
            return getattr(self, name)

    @property
    def presence(self) -> Activity:
        """The user's activity, shared with other processes on this home."""
        return self._presence

    def activity(self) -> None:
        """The user did something (the app calls this on every keypress)."""
        self.presence.touch()

    @property
    def embedder(self) -> SentenceTransformerEmbedder:
        return self._once(
            "_embedder",
            lambda: make_embedder(self.settings.embedding, self.store.end_vector_models()),
        )

    def importer(self, store: KnowledgeStore | None = None) -> Importer:
        """An Importer into `store` (default: this one's). Where the encoder cannot be had (its
        model missing, its one-off export failed) it still reads and stores every message, and
        its report says why nothing was embedded and what to do."""
        from assistant.importing.importer import Importer

        try:
            embedder, problem = self.embedder, ""
        except ModelMissing as exc:
            embedder, problem = None, str(exc)
        s = self.settings
        # without an encoder there is no QA bank to open; its answers are checked when served
        on_removed = self._answers_stale if embedder is not None else None
        return Importer(
            store or self.store, embedder, s.chunking, s.embedding.batch_size, self.presence,
            no_encoder=problem, on_removed=on_removed,
        )  # fmt: skip

    def _answers_stale(self, chunk_ids: list[int]) -> None:
        """Mail vanished from its source: the answers made from or quoting its chunks are
        stale (the night's refresh answers them again). The KV nodes of those chunks are left
        to the budget's eviction: no prompt restores a removed chunk again, so they go unused."""
        from cache.qa_entries import using

        qa = self.qa
        stale = using(qa.answered(), chunk_ids)
        if stale:
            qa.mark_stale(stale)

    def answerer(self) -> Answerer:
        """The user's answer path (loads the LLM on first use)."""

        def build() -> Answerer:
            return make_answerer(
                self.settings, self.store, self.embedder, self.selection, self.prompt_cache(),
                self.memory, self.lines(), self.presence, self.cache_db, self.reader, self.judge,
            )  # fmt: skip

        return self._once("_answerer", build)

    def focused_answerer(self, threads: Sequence[str]) -> Answerer:
        """An answerer over the same parts whose retrieval puts the chunks of `threads` first
        (a follow-up's: assistant/mail/focus.py), with the filters read from the rewritten
        question's words as any question's (bench/results/followups_filters.json)."""
        from assistant.answer.answerer import Answerer
        from assistant.mail.focus import FocusedSelection

        a = self.answerer()
        # the last turn's threads as they are now: an import since may have merged one
        now = [self.store.current_thread(t) or t for t in threads]
        select = FocusedSelection(self.selection, now)
        return Answerer(
            a.settings, a.store, a.embedder, select, a.cache, a.memory, a.lines, a.activity,
            a.history, reader=a.reader, judge=a.judge,
        )  # fmt: skip

    def lines(self) -> LineFinder:
        """The line scorer the answer path and precompute find quotes with."""
        weights = self.home.cache_dir / LINE_WEIGHTS
        return self._once("_lines", lambda: make_lines(self.embedder, self.cache_db, weights))

    def prompt_cache(self) -> PromptCache:
        """Prompts prefilled with the KV tree and decoded: the answerer's and precompute's."""

        def build() -> PromptCache:
            return make_prompt_cache(self.settings, self.llm, self.kv, self.embedder, self.presence)

        return self._once("_prompt_cache", build)

    @property
    def llm(self) -> LocalLLM:
        """The writer's model: [models] writer, else [llm] model_path, else DEFAULT_WRITER
        (factories.make_writer; `writer_note` says where memory made it a smaller one)."""

        def made() -> LocalLLM:
            llm, self.writer_note = make_writer(self.settings)
            return llm

        return self._once("_llm", made)

    @property
    def judge(self) -> Reader | None:
        """The reader (answer/judge.py) on [models] reader's model, loaded on first use; None
        for "none", or where it cannot be had (`reader_note` says why)."""
        if self.settings.models.reader == "none":
            return None
        if self._judge is None:
            with self._building:
                if self._judge is None and not self.reader_note:
                    from cache.verdicts import Verdicts

                    kv_dir, kept = self.home.cache_dir / "reader", Verdicts(self.cache_db)
                    made = make_judge(self.settings, lambda: self.llm, kv_dir, kept, self._tree)
                    self._judge, self.reader_note = made
        return self._judge

    def _tree(self, llm: LocalLLM) -> KVTree:
        """The KV tree of `llm`'s nodes: the writer's own where the reader is its model."""
        from cache.kv_tree import KVTree

        return self.kv if llm is self.llm else KVTree(self.cache_db, self.blobs, llm.fingerprint)

    @property
    def qa(self) -> QABank:
        """The QA bank, on the cache database."""
        from cache.qa_bank import QABank

        cache = self.settings.cache
        return self._once(
            "_qa",
            lambda: QABank(
                self.cache_db,
                cache.qa_threshold,
                int(cache.qa_budget_mb * 2**20),
                cache.qa_candidate_threshold,
                embedder=self.embedder,
                evidence_threshold=(
                    cache.qa_evidence_threshold if cache.qa_verify == "evidence" else None
                ),
            ),
        )

    @property
    def kv(self) -> KVTree:
        """The KV tree of this model (loads the LLM: its fingerprint names the tree's nodes)."""
        from cache.kv_tree import KVTree

        return self._once("_kv", lambda: KVTree(self.cache_db, self.blobs, self.llm.fingerprint))

    @property
    def selection(self) -> Selection:
        """The prompt's chunks for a question (retrieval, then the reranker when it is on)."""
        from assistant.rerank.selection import Selection

        return self._once(
            "_selection", lambda: Selection(self.settings, self.retriever, self.reranker)
        )

    @property
    def memory(self) -> QAMemory:
        """Writes to the QA bank and checks that stored answers still hold."""
        from assistant.answer.qa_memory import QAMemory
        from assistant.answer.qa_verify import HitVerifier

        def build() -> QAMemory:
            from assistant.answer.judge import same_check

            judge = self.judge
            same = same_check(judge) if judge is not None else None
            verifier = HitVerifier(self.retriever, self.settings.cache, same=same)
            return QAMemory(self.store, self.qa, self.embedder, self.selection, verifier)

        return self._once("_memory", build)

    @property
    def reader(self) -> QueryReader:
        """Query terms and filters read from questions, against `[mail] today` (none: now)."""
        from datetime import date

        from assistant.mail.reader import QueryReader

        mail = self.settings.mail
        today = date.fromisoformat(mail.today) if mail.today else None
        return self._once(
            "_reader",
            lambda: QueryReader(self.store, today, mail.filters, self.home.index_dir),
        )

    @property
    def retriever(self) -> Retriever:
        return self._once(
            "_retriever",
            lambda: Retriever(
                self.store, self.embedder, self.home.index_dir, self.settings.retrieval
            ),
        )

    @property
    def cache_db(self) -> Database:
        """The cache database, opened once; a damaged file is an error that names it and says
        what moving it aside costs (only what the caches hold), as the knowledge bank's does."""
        return self._once("_cache_db", lambda: _open_cache(self.home.cache_dir / CACHE_DB))

    @property
    def blobs(self) -> BlobStore:
        """The one blob store: KV-tree nodes and the reranker's document KV, each in budget."""
        return self._once(
            "_blobs", lambda: cache_blobs(self.settings, self.home.cache_dir, self.cache_db)
        )

    @property
    def reranker(self) -> Reranker:
        """The reranker, with its document KV in the one blob store."""
        from assistant.rerank.loader import make_reranker

        def build() -> Reranker:
            check = self.rerank_check()
            return make_reranker(
                self.settings, self.home.models_dir, self.blobs, decide=check.chosen
            )

        return self._once("_reranker", build)

    def precompute_parts(self) -> PrecomputeParts:
        """What a precompute pass uses: the answer path's own parts (the answerer is built only
        when a served hit is rechecked)."""
        from assistant.precompute.parts import PrecomputeParts

        return PrecomputeParts(
            settings=self.settings, store=self.store, cache_db=self.cache_db, qa=self.qa,
            kv=self.kv, memory=self.memory, selection=self.selection, cache=self.prompt_cache(),
            embedder=self.embedder, presence=self.presence, lines=self.lines(),
            check=self.rerank_check(), lock=self.precompute_lock,
            weights_path=self.home.cache_dir / LINE_WEIGHTS,
            recheck=lambda served: self.answerer().recheck(served), importer=self.importer(),
            judge=lambda: self.judge,
        )  # fmt: skip

    def rerank_check(self) -> RerankCheck:
        """The nightly reranker self-check's probes and result (`rerank = "auto"`)."""
        from assistant.rerank.selfcheck import RerankCheck

        return RerankCheck(self.home.cache_dir / "rerank_check.json")


def _open_cache(path: Path) -> Database:
    import sqlite3

    from cache.db import open_cache_db

    try:
        return open_cache_db(path)
    except sqlite3.DatabaseError as exc:
        raise DatabaseError(
            f"{path}: not a usable SQLite database ({exc}). It holds only caches (remembered "
            "answers, prepared prompts, the chat's history, the reader's verdicts): move it "
            "aside, with the qa.db-wal and qa.db-shm beside it, and the app starts a new one; "
            "your mail is not in it."
        ) from exc


def open_services(
    home: Home | Path | str | None = None, settings: Settings | None = None
) -> Services:
    """The parts for `home` (opened, created if new), with `settings` (else its config file's and
    the environment's). Only the knowledge bank is opened here; the rest is built on first use."""
    h = home if isinstance(home, Home) else open_home(home)
    settings = settings if settings is not None else load_settings(h.config_file)
    store = KnowledgeStore(open_db(h.knowledge_db))
    thread_update.ensure(store)  # an existing home's threads, once; a home imported into elsewhere
    auto = settings.cache.kv_budget_mb <= 0
    if auto:  # sized to this machine's free disk, once, as the home opens
        held = held_bytes(h.cache_dir / CACHE_DB)  # what the KV cache stores is its room
        settings.cache.kv_budget_mb = kv_budget(0, h.cache_dir, held) / 2**20
    return Services(home=h, settings=settings, store=store, kv_budget_auto=auto)
