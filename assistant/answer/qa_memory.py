"""What goes into the QA bank, whether a stored answer still holds, and which one a question is
served: the answer path and precompute both write answers (and pending entries) through here, and
a lookup runs here over the candidates the bank offers (cache/qa_bank.py never calls back)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from assistant.answer.evidence import Found, holds
from assistant.answer.qa_verify import HitVerifier
from assistant.knowledge.retrieval import Hit
from assistant.knowledge.store import KnowledgeStore
from assistant.rerank.selection import Selection
from cache.protocols import Embedder
from cache.qa_bank import QABank
from cache.qa_entries import QAEntry, QAHit

Check = Callable[[QAEntry], bool]


def find_hit(qa: QABank, vector, check: Check | None = None) -> QAHit | None:
    """The entry a lookup would serve, freshness aside; nothing is counted or changed. With
    `check` (a verified lookup): the first of the bank's candidates it accepts, nearest first;
    without: the nearest entry, if cosine alone (τ) serves it."""
    for hit in qa.candidates(vector, verified=check is not None):
        if check is None or check(hit.entry):
            return hit
    return None


def lookup_hit(
    qa: QABank, vector, check: Check | None = None, fresh: Check | None = None
) -> QAHit | None:
    """An answered, fresh entry similar enough (`find_hit`), counted as a hit; else None. An
    entry `fresh` refuses (the mail changed under it) is marked stale and the bank asked again; an
    entry `check` refuses is just another question and stays as it is."""
    hit = find_hit(qa, vector, check)
    while hit is not None and fresh is not None and not fresh(hit.entry):
        if not qa.mark_stale([hit.entry.id]):  # no room to say so: answered afresh instead
            return None
        hit = find_hit(qa, vector, check)
    if hit is not None:
        qa.count_hit(hit.entry.id)
    return hit


class QAMemory:
    def __init__(
        self,
        store: KnowledgeStore,
        qa: QABank,
        embedder: Embedder,
        select: Selection,
        verifier: HitVerifier,
    ) -> None:
        self.store, self.qa, self.embedder = store, qa, embedder
        self.select, self.verifier = select, verifier

    def lookup(self, vector, check: Check | None = None) -> QAHit | None:
        """The hit this question is served (`lookup_hit`), stale answers marked stale on the way."""
        return lookup_hit(self.qa, vector, check, self.is_fresh)

    def is_fresh(self, entry: QAEntry) -> bool:
        """False when the mail changed under a stored answer: one of its sources is gone, its
        quoted line no longer stands in its chunk, or a chunk newer than the answer now ranks
        in its question's top-k. Cheap when nothing was imported since (one max(id) query); a
        confirmed entry is not checked again."""
        ids = entry.chunk_ids
        newest = self.store.max_chunk_id()
        records = self.store.chunk_records(ids)
        if len(records) != len(ids):
            return False
        if entry.evidence and not self._still_says(entry.evidence[0]):
            return False
        if entry.chunk_watermark >= newest:
            return True
        top = self.select(entry.question, self.qa.vector(entry.id))
        if any(h.chunk_id > entry.chunk_watermark for h in top):
            return False
        self.qa.confirm(entry.id, newest)
        return True

    def _still_says(self, evidence: tuple[int, str]) -> bool:
        chunk_id, line = evidence
        records = self.store.chunk_records([chunk_id])
        return bool(records) and holds(records[0], line)

    def keep(
        self,
        question: str,
        vector,
        answer: str,
        hits: Sequence[Hit],
        origin: str,
        found: Found | None = None,
        judged: bool = False,
    ) -> None:
        """Remember an answer made from `hits`, with the lines its quote showed (`found`: what a
        later question's own quote must show for the answer to be served to it), unless an
        import is still embedding: dense search then saw only part of the mail. `judged`: a
        reader judged its quote (else one judges it when it is first served)."""
        if self.store.all_embedded(self.embedder.name):
            chunk_ids = [str(h.record.ref()["chunk_id"]) for h in hits]
            lines = found.evidence() if found is not None else []
            self.remember(question, vector, answer, chunk_ids, origin, lines, judged)

    def remember(
        self,
        question: str,
        vector,
        answer: str | None,
        sources: list[str],
        origin: str = "user",
        evidence: Sequence[tuple[int, str]] = (),
        judged: bool = False,
    ) -> int:
        """Store an answer (or a pending entry) in the QA bank. A pending or stale entry for the
        same question (as similar as a hit needs, and passing the guard, so that a near-miss
        never overwrites another question's entry) is filled in rather than duplicated."""
        version, watermark = self.store.version("chunks"), self.store.max_chunk_id()
        near = self.qa.nearest(vector, answered_only=False)
        same = (
            near is not None
            and near.similarity >= min(self.qa.floor(self.verifier.active, near.entry), 0.999)
            and self.verifier.same_question(question, near.entry)
        )
        if same and (near.entry.answer is None or near.entry.stale):
            if answer is not None:  # filled in by whoever answered it now (its mark says so)
                self.qa.set_answer(near.entry.id, answer, sources, version, watermark, evidence,
                                   origin, judged)  # fmt: skip
            return near.entry.id
        return self.qa.add(question, vector, answer, sources, version, origin, watermark, evidence,
                           judged)  # fmt: skip
