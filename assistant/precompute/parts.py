"""The parts a precompute pass uses, handed to it by services.py (the answer path's own, shared):
a job reaches only what is named here, never the whole Services."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlite_utils import Database

    from assistant.answer.evidence import LineFinder
    from assistant.answer.judge import Reader
    from assistant.answer.qa_memory import QAMemory
    from assistant.config import Settings
    from assistant.importing.importer import Importer
    from assistant.knowledge.embeddings import SentenceTransformerEmbedder
    from assistant.knowledge.store import KnowledgeStore
    from assistant.kv.prompt_cache import PromptCache
    from assistant.precompute.activity import Activity
    from assistant.rerank.selection import Selection
    from assistant.rerank.selfcheck import RerankCheck
    from cache.kv_tree import KVTree
    from cache.qa_bank import QABank
    from cache.qa_entries import Served


@dataclass(frozen=True)
class PrecomputeParts:
    settings: Settings
    store: KnowledgeStore
    cache_db: Database  # the QA bank's and the KV tree's; each table on it has its owner
    qa: QABank
    kv: KVTree
    memory: QAMemory
    selection: Selection
    cache: PromptCache
    embedder: SentenceTransformerEmbedder
    presence: Activity
    lines: LineFinder
    check: RerankCheck
    lock: threading.Lock  # one pass at a time in a process
    weights_path: Path  # where a refit of the line scorer goes
    recheck: Callable[[Served], bool]  # a served hit answered afresh (Answerer.recheck)
    # reads the remembered sources again (job "reimport"); None: the night does not import
    importer: Importer | None = None
    # the reader (loaded on first use; None: none configured), whose excerpts' KV nodes a
    # chunk's job makes after the chunk's own
    judge: Callable[[], Reader | None] | None = None
