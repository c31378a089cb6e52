"""How services.py makes the parts that are built from others: each from the parts it needs,
passed in (Services decides when, and builds each once). Heavy imports happen inside, when a
part is first made, so that a command that needs none of them starts fast."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from assistant.config import Settings
from assistant.home import bundled

if TYPE_CHECKING:
    from sqlite_utils import Database

    from assistant.answer.answerer import Answerer
    from assistant.answer.evidence import LineFinder
    from assistant.answer.judge import Reader
    from assistant.answer.qa_memory import QAMemory
    from assistant.knowledge.embeddings import SentenceTransformerEmbedder
    from assistant.knowledge.store import KnowledgeStore
    from assistant.kv.prompt_cache import PromptCache
    from assistant.llm.runtime import LocalLLM
    from assistant.mail.reader import QueryReader
    from assistant.precompute.activity import Activity
    from assistant.rerank.selection import Selection
    from cache.blobs import BlobStore
    from cache.kv_tree import KVTree
    from cache.verdicts import Verdicts


def cache_blobs(settings: Settings, cache_dir: Path, db: Database) -> BlobStore:
    """A KV blob store on `db`: KV-tree nodes and the reranker's document KV, each with its
    budget."""
    from assistant.rerank.doc_kv import KIND as DOC_KV
    from cache.blobs import BlobStore
    from cache.kv_tree import KIND

    budgets = {
        KIND: settings.cache.kv_budget_bytes,
        DOC_KV: int(settings.reranker.doc_kv_budget_mb * 2**20),
    }
    return BlobStore(db, cache_dir / "kv", budgets)


def make_writer(settings: Settings) -> tuple[LocalLLM, str]:
    """The writer's model and a note ("" unless a smaller model writes, for memory): [models]
    writer, else [llm] model_path (a file the user named), else DEFAULT_WRITER."""
    from assistant.config_sections import DEFAULT_WRITER
    from assistant.llm import make_llm

    writer, note = settings.models.writer, ""
    if writer or not settings.llm.model_path:
        from assistant.llm.models import writer_choice

        path, note = writer_choice(writer or DEFAULT_WRITER)
        settings.llm.model_path = str(path)
    return make_llm(settings.llm), note


def make_prompt_cache(
    settings: Settings,
    llm: LocalLLM,
    kv: KVTree,
    embedder: SentenceTransformerEmbedder,
    activity: Activity,
) -> PromptCache:
    from assistant.kv.prompt_cache import PromptCache

    system = (bundled("prompts") / "answer.txt").read_text(encoding="utf-8")
    return PromptCache(settings, llm, kv, system, embedder, activity=activity)


def make_lines(
    embedder: SentenceTransformerEmbedder, cache_db: Database, weights_path: Path
) -> LineFinder:
    """The line scorer, with the home's own fitted weights where a night has fitted them."""
    from assistant.answer.evidence import DEFAULT_WEIGHTS, LineFinder, LineWeights
    from cache.sentences import SentenceVectors

    weights = LineWeights.load(weights_path) or DEFAULT_WEIGHTS
    return LineFinder(embedder, SentenceVectors(cache_db), weights)


def make_judge(
    settings: Settings,
    writer: Callable[[], LocalLLM],
    kv_dir: Path,
    kept: Verdicts | None = None,
    tree: Callable[[LocalLLM], KVTree] | None = None,
) -> tuple[Reader | None, str]:
    """(the reader, "") or (None, why not): the configured model, or on a machine with too
    little free memory for it the smaller shipped one, said so. `writer()` is the writer's
    model, shared when the reader is the same file; `kept`, its verdicts kept between runs;
    `tree(model)`, the KV tree its excerpts' nodes are kept in."""
    from assistant.answer.judge import Prompts, Reader
    from assistant.llm.model_file import LLMError
    from assistant.llm.models import reader_choice
    from assistant.llm.runtime import LocalLLM

    try:
        path, note = reader_choice(settings.models.reader)
    except LLMError as exc:
        return None, f"{exc}; answers are checked without a reader"
    if path is None:
        return None, note
    llm = writer() if path == writer().path else LocalLLM(path, 2048, settings.llm.n_threads)
    nodes = tree(llm) if tree is not None else None
    prompts = Prompts.read(bundled("prompts"))
    return Reader(llm, prompts, kv_dir=kv_dir, kept=kept, nodes=nodes), note


def make_answerer(
    settings: Settings,
    store: KnowledgeStore,
    embedder: SentenceTransformerEmbedder,
    selection: Selection,
    cache: PromptCache,
    memory: QAMemory,
    lines: LineFinder,
    activity: Activity,
    cache_db: Database,
    reader: QueryReader,
    judge: Reader | None,
) -> Answerer:
    from assistant.answer.answerer import Answerer
    from cache.prediction import History

    return Answerer(
        settings,
        store,
        embedder,
        selection,
        cache,
        memory,
        lines,
        activity=activity,
        history=History(cache_db),
        reader=reader,
        judge=judge,
    )
