"""What each kind of precompute job does. Every handler is idempotent: a job killed half-way and
run again leaves the same state as one run once (entries are filled in, not added twice)."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from assistant.answer import fit
from assistant.answer.evidence import LineFinder
from assistant.answer.qa_memory import QAMemory
from assistant.config_sections import PrecomputeSettings
from assistant.home import bundled
from assistant.importing.remembered import remembered
from assistant.knowledge.embeddings import embed_missing
from assistant.knowledge.store import KnowledgeStore
from assistant.kv.prompt_cache import Preempted, PromptCache
from assistant.precompute.abstract import extract_items
from assistant.precompute.cache_jobs import CacheJobs
from assistant.precompute.prediction_jobs import SEEDS, PredictionJobs
from assistant.rerank import selection
from assistant.rerank.selection import Selection
from assistant.rerank.selfcheck import AUTO_MODES, RerankCheck, run_check
from cache.jobs import Job, JobQueue
from cache.prediction import History, KnowledgeAbstract
from cache.qa_entries import Served

if TYPE_CHECKING:
    from assistant.answer.judge import Reader
    from assistant.importing.importer import Importer  # handed in (PrecomputeParts), not built here

PRIORITY = {
    # first of all: new mail in and deleted mail out, so that every job below sees the mail as
    # it is now (issue 35)
    "reimport": 1,
    # first: retrieval, and so every job below, searches only the chunks that have a vector
    "embed": 5,
    "refresh": 10,
    "abstract": 20,
    # before the predictions: with a node for 45% of the chunks the e2e KV chunk hit rate was
    # 0.259 (bench/results/e2e_chunk_nodes.json); predictions alone had reached 0.086 (an
    # earlier run of bench/e2e.py, not side by side)
    "chunk_kv": 22,
    "predict_history": 25,
    "predict_detail": 30,
    "predict_general": 35,
    "doc_kv": 37,
    "populate": 40,
    "decode": 45,
    # the reader's line nodes save a fifth of what a chunk node saves a night second
    # (bench/results/reader_nodes.json): once the chunk nodes are made
    "reader_lines": 48,
    "rebuild_kv": 50,
    "rerank_check": 55,  # nightly, after the caches are filled: it reads predicted questions
    # the line scorer's weights, refitted on questions the model writes about this mail
    "fit_lines": 60,
    # a sample of the QA bank's served hits answered afresh; an entry that served a wrong answer
    # is tightened (Answerer.recheck)
    "qa_selfcheck": 58,
}
# before the chunk nodes (after the abstract) where they saved more (cache/prediction.Savings)
PREDICTION_KINDS = ("predict_history", "predict_detail", "predict_general", "populate", "decode")
PREDICTIONS_FIRST = PRIORITY["chunk_kv"] - 1
SELFCHECK = 20  # served hits a night answers afresh
FIT_LINES = 150  # lines a night writes questions about
_BATCH = 256


class Handlers(PredictionJobs, CacheJobs):
    """What each kind of job does, by its kind (`run`): the mail itself, vectors, the abstract and
    the nightly checks here; predicting questions in PredictionJobs, filling and converting the
    cache layers in CacheJobs."""

    def __init__(
        self,
        cache: PromptCache,
        select: Selection,
        memory: QAMemory,
        store: KnowledgeStore,
        queue: JobQueue,
        abstract: KnowledgeAbstract,
        history: History,
        settings: PrecomputeSettings,
        kv: bool = True,
        check: RerankCheck | None = None,
        lines: LineFinder | None = None,
        weights_path: Path | None = None,
        recheck: Callable[[Served], bool] | None = None,
        importer: Importer | None = None,
        judge: Callable[[], Reader | None] | None = None,
    ) -> None:
        """`cache` prefills and decodes, `select` chooses a question's chunks as the answer path
        does, `memory` writes the QA bank. `check`: where detail questions are kept with their
        source chunk, as probes for the reranker self-check (`rerank = "auto"`), and where the
        check's result goes."""
        self.cache, self.select, self.memory = cache, select, memory
        self.qa, self.embedder = memory.qa, cache.embedder
        self.store, self.abstract, self.history = store, abstract, history
        self.settings = settings
        self.kv = kv  # False: the QA bank only (every prediction decoded, no KV stored)
        self.check = check
        self.lines = lines or LineFinder(cache.embedder)  # the quote, as the answer path finds it
        self.weights_path = weights_path  # where a refit of the line scorer goes
        self.recheck = recheck  # a served hit answered afresh (Answerer.recheck)
        self.importer = importer  # reads the remembered sources again
        self.judge = judge  # the reader, loaded on first use (its excerpts' nodes)
        self.queue = queue
        self.seeds = SEEDS
        self.predictions_first = False  # the planner sets it from what each saved
        folder = bundled("prompts")
        self.prompts = {
            name: (folder / f"predict_{name}.txt").read_text(encoding="utf-8")
            for name in ("detail", "general")
        }

    def run(self, job: Job) -> None:
        getattr(self, f"_{job.kind}")(job.payload)

    def priority(self, kind: str) -> int:
        """The queue priority of a job of `kind` (lower runs first)."""
        if self.predictions_first and kind in PREDICTION_KINDS:
            return PREDICTIONS_FIRST
        return PRIORITY[kind]

    # -- the mail itself ------------------------------------------------------------------------

    def _reimport(self, payload: dict) -> None:
        """The remembered sources read again, as `assistant import` with no path reads them:
        new mail in, mail deleted from them out, then the new chunks embedded. Its writes take
        the knowledge database's writer lock as every import's do. A user question (or the run's
        end) stops it (the importer checks between messages and between embedding batches): what
        was stored stays, nothing is removed by the stopped read, and the job goes back in the
        queue."""
        paths = remembered(self.store).there
        report = self.importer.run(paths, cancelled=self.cache.steps_aside)
        if report.cancelled:
            raise Preempted

    # -- vectors -------------------------------------------------------------------------------

    def _embed(self, payload: dict) -> None:
        """Vectors for the chunks that lack one from the encoder in use (an import stopped
        half-way, or [embedding] backend changed), a committed batch at a time: a user question
        stops it between batches, and the job goes back in the queue with what is left."""
        embed_missing(self.store, self.embedder, cancelled=self.cache.steps_aside)
        if self.cache.steps_aside() and not self.store.all_embedded(self.embedder.name):
            raise Preempted

    # -- the knowledge abstract ----------------------------------------------------------------

    def _abstract(self, payload: dict) -> None:
        ids = self.store.chunk_ids(after=self.abstract.read_upto(), upto=payload["upto"])
        for start in range(0, len(ids), _BATCH):
            batch = ids[start : start + _BATCH]
            records = self.store.chunk_records(batch)
            self.abstract.merge(item for r in records for item in extract_items(r))
            self.abstract.mark_read(batch[-1])
        self.abstract.mark_read(payload["upto"])

    # -- the nightly checks -------------------------------------------------------------------

    def _rerank_check(self, payload: dict) -> None:
        """Nightly: source@3 of fused and of each reranker on the predicted questions whose
        source chunk is known; `rerank = "auto"` then uses what it turned on (selfcheck.py).
        Steps aside for the user between candidates (then runs again from the start)."""
        reranker, settings = self.select.reranker, self.select.settings
        if reranker is None or self.check is None:
            return

        def step_aside() -> None:
            if self.cache.steps_aside():
                raise Preempted

        def select(question: str, k: int, mode: str, budget: Callable[[], None]) -> list[int]:
            def check() -> None:
                step_aside()
                budget()

            hits = selection.select(
                self.select.retriever, reranker, question, k, settings.answer.duplicates,
                check=check, mode=mode,
            )  # fmt: skip
            return [h.chunk_id for h in hits]

        probes = self.check.probes(settings.reranker.auto_questions)
        modes = [m for m in reranker.available if m in AUTO_MODES]
        result = run_check(select, probes, modes, settings.reranker.auto_max_seconds)
        self.check.save(result, payload["probes"])

    def _fit_lines(self, payload: dict) -> None:
        """The line scorer's weights and bars refitted on questions the model writes about
        lines of this mail (answer/fit.py), kept for the next start and used from now on."""
        mailbox = fit.Mailbox(self.store, self.cache, self.select, self.lines)
        n, rng = payload.get("n", FIT_LINES), random.Random(payload["seed"])
        weights = fit.refit(mailbox, n, rng, current=self.lines.weights)
        if weights is None:
            return
        if self.weights_path is not None:
            weights.save(self.weights_path)
        self.lines.weights = weights

    def _qa_selfcheck(self, payload: dict) -> None:
        """Served hits answered afresh, newest first; an entry whose answer differs from the
        fresh one is served from then on only to questions nearer to it."""
        if self.recheck is None:
            return
        for served in self.qa.unchecked(payload.get("n", SELFCHECK)):
            self.recheck(served)
