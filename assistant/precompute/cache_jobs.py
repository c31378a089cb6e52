"""The precompute jobs that fill and convert the cache layers (a part of Handlers): a predicted
question answered or only prefilled (by the serving floor), the [system, chunk] nodes, the
reranker's document KV, pending and stale QA entries answered, and QA entries' KV rebuilt."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from assistant.answer.evidence import LineFinder, prompt_records
from assistant.answer.judge import judged_line
from assistant.answer.lines import mail_lines
from assistant.answer.qa_memory import QAMemory
from assistant.answer.shape import first_sentence, mail_line, mail_of
from assistant.config_sections import PrecomputeSettings
from assistant.knowledge.retrieval import Hit
from assistant.knowledge.store import KnowledgeStore
from assistant.kv.prompt_cache import Preempted, PromptCache
from assistant.rerank.selection import Selection
from cache import policy
from cache.qa_bank import QABank

if TYPE_CHECKING:
    from assistant.answer.judge import Reader
    from assistant.knowledge.store import ChunkRecord


class CacheJobs:
    """Mixed into Handlers: uses its parts, its `settings` and `kv`, and the question vectors
    of PredictionJobs' payloads (_unpacked)."""

    cache: PromptCache
    select: Selection
    memory: QAMemory
    store: KnowledgeStore
    qa: QABank
    lines: LineFinder
    settings: PrecomputeSettings
    kv: bool
    judge: Callable[[], Reader | None] | None

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
            self._reader_nodes(records[0])
        self.lines.chunk_vectors(records)

    def _reader_lines(self, payload: dict) -> None:
        """The reader's line nodes of a chunk that has its node (reader_nodes "headers": the
        planner queues them once no chunk node waits), within the KV budget's headroom."""
        records = self.store.chunk_records([payload["chunk"]])
        if records and self._room_for(1):
            self._reader_nodes(records[0], lines=True)

    def _reader_nodes(self, record: ChunkRecord, lines: bool | None = None) -> int:
        """The reader's nodes ([precompute] reader_nodes): its mail's header, and after it, for
        "lines" (or `lines`), each of the chunk's lines of three words or more (the lines it
        judges as candidates: answer/judge.py judged_line); steps aside between pieces.
        Returns how many were made."""
        kind = self.settings.reader_nodes
        reader = self.judge() if self.judge is not None and kind != "none" else None
        if reader is None or not self.kv:
            return 0
        each = kind == "lines" if lines is None else lines
        texts = [x.text for x in mail_lines(record.text) if judged_line(x.text)] if each else []
        return reader.keep_nodes(mail_line(mail_of(record)), texts, self.cache.checker(True))

    def _doc_kv(self, payload: dict) -> None:
        """The reranker's document KV of a chunk (issue 7): a reranked question then evaluates
        only its own tokens for this candidate. Steps aside for the user between passages."""
        reranker = self.select.reranker
        records = self.store.chunk_records([payload["chunk"]])
        if reranker is None or not reranker.active or not records:
            return
        reranker.precompute([records[0].text], self.cache.steps_aside)
        if self.cache.steps_aside():
            raise Preempted

    def _decode(self, payload: dict) -> None:
        """KV → QA: answer a pending entry (its prefix is in the tree, so only decoding costs)."""
        entry = self.qa.get(payload["entry"])
        if entry is not None and entry.answer is None:
            self._answer_again(entry.id, entry.question, entry.origin)

    def _refresh(self, payload: dict) -> None:
        """A stale answer answered again from the mail as it is now. A user's answer was kept
        because the reader confirmed its quote; the night's is not judged, so it is kept as
        "refreshed" and the reader judges it when it is first served, as the night's other
        answers are (answer/answerer.py)."""
        entry = self.qa.get(payload["entry"])
        if entry is not None and entry.stale:
            origin = "refreshed" if entry.origin == "user" else entry.origin
            self._answer_again(entry.id, entry.question, origin)

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
