"""What each kind of precompute job does. Every handler is idempotent: a job killed half-way and
run again leaves the same state as one run once (entries are filled in, not added twice)."""

from __future__ import annotations

import base64
import hashlib
import random
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from assistant.answer import fit
from assistant.answer.evidence import LineFinder, prompt_records
from assistant.answer.qa_memory import QAMemory
from assistant.answer.shape import first_sentence
from assistant.config_sections import PrecomputeSettings
from assistant.home import bundled
from assistant.knowledge.embeddings import embed_missing
from assistant.knowledge.retrieval import Hit
from assistant.knowledge.sources import SourceLog
from assistant.knowledge.store import KnowledgeStore
from assistant.precompute.abstract import extract_items
from assistant.prompt_cache import Preempted, PromptCache
from assistant.rerank import selection
from assistant.rerank.selection import Selection
from assistant.rerank.selfcheck import AUTO_MODES, RerankCheck, run_check
from cache import policy
from cache.jobs import Job, JobQueue
from cache.prediction import (
    History,
    KnowledgeAbstract,
    clean_question,
    drop_known,
    parse_questions,
)
from cache.qa_entries import Served

if TYPE_CHECKING:
    from assistant.importer import Importer  # handed in (PrecomputeParts), never built here

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
SEEDS = ("When", "Who", "What")  # question words that start detail questions (prompts/README.md)
_BATCH = 256


class Handlers:
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
        the knowledge database's writer lock as every import's do. A user question stops it
        (the importer checks between messages and between embedding batches): what was stored
        stays, nothing is removed by the stopped read, and the job goes back in the queue."""
        paths = [p for p in SourceLog(self.store.db).paths() if p.exists()]
        report = self.importer.run(paths, cancelled=self.cache.user_waiting)
        if report.cancelled:
            raise Preempted

    # -- vectors -------------------------------------------------------------------------------

    def _embed(self, payload: dict) -> None:
        """Vectors for the chunks that lack one from the encoder in use (an import stopped
        half-way, or [embedding] backend changed), a committed batch at a time: a user question
        stops it between batches, and the job goes back in the queue with what is left."""
        embed_missing(self.store, self.embedder, cancelled=self.cache.user_waiting)
        if self.cache.user_waiting() and not self.store.all_embedded(self.embedder.name):
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

    # -- prediction ----------------------------------------------------------------------------

    def _predict_detail(self, payload: dict) -> None:
        records = self.store.chunk_records([payload["chunk"]])
        if records:  # else the chunk was deleted since
            questions = self._questions_from(records[0].text, self.seeds)
            self._queue_questions(questions, "predicted:detail")
            if self.check is not None:
                self.check.add_probes(questions, payload["chunk"])

    def _predict_history(self, payload: dict) -> None:
        """Questions in the user's style about what the user asks about: written after the chunks
        that rank near their recent questions, opened with the question words they use.
        (Asked to continue a list of their questions, SmolLM2-135M repeats one generic question.)
        """
        recent = self.history.recent(10)
        seeds = openers(recent) or list(self.seeds)
        questions: list[str] = []
        for chunk in self._chunks_near(recent[::-1]):
            if len(questions) >= payload["n"]:
                break
            questions += self._questions_from(chunk, seeds)
        self._queue_questions(questions[: payload["n"]], "predicted:history")

    def _chunks_near(self, questions: Sequence[str]) -> Iterator[str]:
        seen: set[int] = set()
        k = 2 * self.select.settings.answer.context_chunks
        for question in questions:
            vector = self.embedder.embed_batch([question])[0]
            for hit in self.select.retriever.search(question, k=k, query_vector=vector):
                if hit.chunk_id not in seen:
                    seen.add(hit.chunk_id)
                    yield hit.record.text

    def _questions_from(self, chunk: str, seeds: Sequence[str]) -> list[str]:
        """Questions written after `chunk`. Its [system, chunk] node is read from the KV tree,
        and kept there only within the headroom: a prediction never evicts the planned nodes."""
        prompts = [self.prompts["detail"].format(seed=s).rstrip("\n") for s in seeds]
        kv = self.kv and (self._room_for(1) or self.cache.kv_cached([chunk]))
        outputs = self.cache.continue_after_chunk(chunk, prompts, 24, kv=kv)
        cleaned = [clean_question(f"{s} {o}") for s, o in zip(seeds, outputs, strict=True)]
        return [q for q in cleaned if q]

    def _predict_general(self, payload: dict) -> None:
        prompt = self.prompts["general"].format(abstract=self.abstract.render())
        text = self.cache.complete(prompt.rstrip("\n"), max_tokens=24 * payload["n"])
        self._queue_questions(parse_questions(text)[: payload["n"]], "predicted:general")

    def _queue_questions(self, questions: Sequence[str], origin: str) -> None:
        """Queue a populate job per new question, with the vector drop_known embedded it to
        (the job uses it rather than embedding the question again)."""
        qa = self.qa
        for question, vector in drop_known(questions, self.embedder, qa, qa.threshold):
            key = "populate:" + hashlib.sha1(question.lower().encode()).hexdigest()[:16]
            payload = {"question": question, "origin": origin, **self._packed(vector)}
            self.queue.enqueue("populate", key, payload, self.priority("populate"))

    def _packed(self, vector: np.ndarray) -> dict[str, str]:
        """A question's vector for a job's payload (JSON), with the encoder that made it."""
        raw = np.asarray(vector, dtype=np.float32).tobytes()
        return {"vector": base64.b64encode(raw).decode("ascii"), "encoder": self.embedder.name}

    def _unpacked(self, payload: dict) -> np.ndarray:
        """The payload's question vector; embedded now when the job has none (queued by an older
        version) or another encoder made it."""
        if payload.get("vector") and payload.get("encoder") == self.embedder.name:
            return np.frombuffer(base64.b64decode(payload["vector"]), dtype=np.float32).copy()
        return self.embedder.embed_batch([payload["question"]])[0]

    # -- filling and converting the cache layers -----------------------------------------------

    def _populate(self, payload: dict) -> None:
        question, qa = payload["question"], self.qa
        vector = self._unpacked(payload)
        near = qa.nearest(vector, answered_only=False)
        if near is not None and near.similarity >= qa.threshold:
            return  # a question like it is stored already
        hits = self._select(question, vector)
        strategy = policy.choose_strategy(self.serving_floor(), self.settings.decode_cutoff)
        if strategy is policy.Strategy.PREFILL_DECODE or not self.kv:
            self._generate(question, vector, hits, payload["origin"])
            return
        self._prefill_within_room([h.record.text for h in hits])
        self.lines.chunk_vectors([h.record for h in hits])
        ids = [str(h.chunk_id) for h in hits]
        self.memory.remember(question, vector, None, ids, payload["origin"])

    def serving_floor(self) -> float:
        """The lowest similarity at which a stored answer is served to another question, which
        decides whether a predicted question is worth decoding (cache/policy.py: strategy 1,
        prefill only, when hits will be rare). τ serves by cosine alone; verified hits
        ([cache] qa_verify) are served from a lower floor, the evidence check's
        (qa_evidence_threshold) for an answer that keeps its quote's lines: a prediction
        answered tonight can then serve a morning question worded far from it."""
        return self.qa.floor(self.memory.verifier.active)

    def _prefill_within_room(self, texts: list[str]) -> None:
        """Strategy 1's KV, as far as the budget's headroom holds it (a predicted question never
        evicts what is there): with any-order reuse a node per chunk, which serves wherever a
        later prompt puts the chunk; else the prompt's prefix path."""
        if self.cache.settings.cache.reuse == "any-order":
            for text in texts:
                if self._room_for(1):
                    self.cache.prefill([text], missing_only=True)
        elif self._room_for(len(texts)):
            self.cache.prefill(texts, missing_only=True)

    def _room_for(self, nodes: int) -> bool:
        """The KV budget's headroom (cache/policy.py) has room for `nodes` more tree nodes."""
        stats = self.cache.kv.stats()
        room = policy.kv_room(stats["bytes"], self.cache.settings.cache.kv_budget_bytes)
        return room >= nodes * policy.node_bytes(stats["bytes"], stats["nodes_with_kv"])

    def _chunk_kv(self, payload: dict) -> None:
        """Breadth: the [system, chunk] node, which every question retrieving this chunk first
        restores instead of prefilling (its first chunk is a third of its prompt)."""
        records = self.store.chunk_records([payload["chunk"]])
        if records and self._room_for(1):
            self.cache.prefill([records[0].text], missing_only=True)
            if self.cache.settings.cache.reuse == "any-order":
                self.cache.keep_heading()
        self.lines.chunk_vectors(records)

    def _doc_kv(self, payload: dict) -> None:
        """The reranker's document KV of a chunk (issue 7): a reranked question then evaluates
        only its own tokens for this candidate. Steps aside for the user between passages."""
        reranker = self.select.reranker
        records = self.store.chunk_records([payload["chunk"]])
        if reranker is None or not reranker.active or not records:
            return
        reranker.precompute([records[0].text], self.cache.user_waiting)
        if self.cache.user_waiting():
            raise Preempted

    def _rerank_check(self, payload: dict) -> None:
        """Nightly: source@3 of fused and of each reranker on the predicted questions whose
        source chunk is known; `rerank = "auto"` then uses what it turned on (selfcheck.py).
        Steps aside for the user between candidates (then runs again from the start)."""
        reranker, settings = self.select.reranker, self.select.settings
        if reranker is None or self.check is None:
            return

        def step_aside() -> None:
            if self.cache.user_waiting():
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

    def _decode(self, payload: dict) -> None:
        """KV → QA: answer a pending entry (its prefix is in the tree, so only decoding costs)."""
        entry = self.qa.get(payload["entry"])
        if entry is not None and entry.answer is None:
            self._answer_again(entry.id, entry.question, entry.origin)

    def _refresh(self, payload: dict) -> None:
        entry = self.qa.get(payload["entry"])
        if entry is not None and entry.stale:
            self._answer_again(entry.id, entry.question, entry.origin)

    def _answer_again(self, entry_id: int, question: str, origin: str) -> None:
        vector = self.qa.vector(entry_id)
        hits = self._select(question, vector)
        self._generate(question, vector, hits, origin)

    def _select(self, question: str, vector) -> list[Hit]:
        """The chunks the user's question would get; the rerank steps aside for the user."""
        return self.select(question, vector, background=True, check=self.cache.checker(True))

    def _generate(self, question: str, vector, hits: list[Hit], origin: str) -> None:
        """The answer the user's question would get, into the QA bank (its new KV saved too
        where the budget's headroom has room, unless `kv` is off), as the answer path keeps
        it: the model's first sentence with the quote's lines as its evidence, so that a
        morning question whose own quote is that quote is served it (answer/qa_verify.py);
        the sentence is checked against the quote again when it is served. A question whose
        quote is "not found" is kept with no sentence and no evidence (the question guard
        alone could serve it)."""
        records = [h.record for h in hits]
        found = self.lines.find(question, vector, records)
        if found.not_found:
            self.memory.keep(question, vector, "", hits, origin)
            return
        quoted = [e.sentence for e in found.lines]
        read = prompt_records(records, found, self.cache.settings.answer.prompt_chunks)
        segments = self.cache.segments([r.text for r in read], question, quoted)
        # the cached KV is read; new nodes only within the headroom, as populate's prefill
        keep = self.kv and self._room_for(len(segments.chunks))
        draft = self.cache.draft(question, segments, kv=self.kv, sentences=1, keep=keep)
        self.memory.keep(question, vector, first_sentence(draft), hits, origin, found)

    def _rebuild_kv(self, payload: dict) -> None:
        """QA → KV: prefill the prompt prefix an answered entry was made from."""
        texts = self._source_texts(payload["entry"])
        if texts:
            self.cache.prefill(texts)

    def _source_texts(self, entry_id: int) -> list[str]:
        entry = self.qa.get(entry_id)
        ids = entry.chunk_ids if entry else []
        records = self.store.chunk_records(ids)
        return [r.text for r in records] if len(records) == len(ids) else []

    def rebuild_candidates(self, limit: int = 50) -> list[policy.RebuildCandidate]:
        """Answered, fresh entries (most used first) whose prompt prefix is not in the KV tree."""
        out = []
        for entry_id, hits, last_used in self.qa.most_used(limit):
            texts = self._source_texts(entry_id)
            if texts and not self.cache.kv_cached(texts):
                out.append(policy.RebuildCandidate(entry_id, hits, last_used))
        return out


def openers(questions: Sequence[str], most: int = 3) -> list[str]:
    """The words the user starts questions with, most used first ("When", "Who" …)."""
    words = [q.split()[0].capitalize() for q in questions if q.split()]
    counts = {w: words.count(w) for w in dict.fromkeys(words)}
    return sorted(counts, key=lambda w: -counts[w])[:most]
