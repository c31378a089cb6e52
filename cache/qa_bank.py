"""The QA bank (semantic cache): questions with their embeddings and answers, or pending.

A lookup is a cosine similarity against every stored question (one matrix-vector product over
an in-memory matrix, reloaded only when the table changed). Unverified, a hit needs similarity
≥ τ (`threshold`). Verified, the entries with similarity ≥ the lower `candidate_threshold` are
candidates, nearest first (`candidates`); the bank only offers them: the answer layer checks them
(assistant/answer/qa_memory.py), takes the first its check accepts as the hit, marks stale the
ones whose mail changed under them and counts the hit (`mark_stale`, `count_hit`). The bank never
calls back into the layer above it.

The user may refuse a served answer ("not what I asked"): the entry then keeps the refused
question's similarity as its own bound and is served only to questions more similar than that,
whatever τ says (a per-entry threshold, learned from the cases where the shared one was wrong).

Each entry names the encoder that made its vector. Only vectors of the bank's encoder are ever
compared; an entry of another encoder (the user switched `[embedding] backend` or model, or the
entry predates the name) is re-embedded from its question text when the bank next loads its
vectors, so its answer stays.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import islice

import numpy as np
from sqlite_utils import Database

from cache.db import transaction, write
from cache.protocols import Embedder
from cache.qa_entries import (
    COLUMNS,
    QAEntry,
    QAHit,
    ServedLog,
    chunk_ids_of,
    entry_of,
    entry_size,
    evidence_json,
)
from cache.room import unless_full

log = logging.getLogger(__name__)


CANDIDATES = 4  # entries a verified lookup checks at most (each check may retrieve)


class QABank(ServedLog):  # the served hits' log: qa_entries.ServedLog
    def __init__(
        self,
        db: Database,
        threshold: float,
        budget_bytes: int,
        candidate_threshold: float | None = None,
        embedder: Embedder | None = None,
        evidence_threshold: float | None = None,
    ) -> None:
        """`embedder` names the encoder of the vectors given to the bank and re-embeds the
        entries of another; without one, entries are compared under the name '' only.
        `evidence_threshold`: the lower floor of a verified lookup for entries that keep their
        evidence lines (the check then compares evidence, not wording)."""
        self.db = db
        self.embedder = embedder
        self.encoder = embedder.name if embedder is not None else ""
        self.threshold = threshold  # the same question by cosine alone
        # the floor of a verified lookup (None: τ, as unverified)
        self.candidate_threshold = candidate_threshold
        self.evidence_threshold = evidence_threshold
        self.budget_bytes = budget_bytes
        self._matrix: tuple[tuple[int, int], np.ndarray, np.ndarray] | None = None

    def _state(self) -> tuple[int, int, int]:
        """Names the set of stored questions: ids are never reused, and an embedding changes
        only when it changes encoder (counted in the third member)."""
        return tuple(
            self.db.execute(
                "SELECT count(*), coalesce(max(id), 0), coalesce(sum(encoder = ?), 0) "
                "FROM qa_entries",
                [self.encoder],
            ).fetchone()
        )

    def _vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """Ids and vectors of the entries of this bank's encoder (the others re-embedded first)."""
        state = self._state()
        if state[0] != state[2] and self._adopt():
            state, self._matrix = self._state(), None  # the same state may name new vectors
        if self._matrix is None or self._matrix[0] != state:
            rows = self.db.execute(
                "SELECT id, embedding FROM qa_entries WHERE encoder = ? ORDER BY id",
                [self.encoder],
            ).fetchall()
            ids = np.array([r[0] for r in rows], dtype=np.int64)
            dim = len(rows[0][1]) // 4 if rows else 0
            matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
            self._matrix = (state, ids, matrix.reshape(len(rows), dim))
        return self._matrix[1], self._matrix[2]

    @unless_full("QA entries re-embedded", 0)
    def _adopt(self, batch: int = 64) -> int:
        """Re-embed, from their question text, the entries another encoder made; their answers,
        hits and sources stay. Returns how many (none without an embedder)."""
        if self.embedder is None:
            return 0
        rows = self.db.execute(
            "SELECT id, question, encoder FROM qa_entries WHERE encoder != ? ORDER BY id",
            [self.encoder],
        ).fetchall()
        for start in range(0, len(rows), batch):
            part = rows[start : start + batch]
            vectors = np.asarray(self.embedder.embed_batch([r[1] for r in part]), np.float32)
            with transaction(self.db):
                for (entry_id, _, _), vector in zip(part, vectors, strict=True):
                    self._set_vector(entry_id, vector.tobytes())
        if rows:
            was = sorted({r[2] or "(unnamed)" for r in rows})
            log.info("re-embedded %d QA entries of %s with %s", len(rows), was, self.encoder)
        return len(rows)

    def _set_vector(self, entry_id: int, blob: bytes) -> None:
        self.db.execute(
            "UPDATE qa_entries SET embedding = ?, encoder = ?, size = length(CAST(question AS "
            "BLOB)) + ? + coalesce(length(CAST(answer AS BLOB)), 0) WHERE id = ?",
            [blob, self.encoder, len(blob), entry_id],
        )

    def nearest(self, vector: np.ndarray, answered_only: bool = True) -> QAHit | None:
        """The most similar usable entry, whatever its similarity (None if the bank is empty)."""
        return next(self._ranked(vector, answered_only), None)

    def floor(self, verified: bool, entry: QAEntry | None = None) -> float:
        """The similarity a hit needs: τ, or the candidate threshold when hits are verified, or
        the evidence threshold for an entry that keeps its evidence lines (no entry given: the
        lowest floor any entry has)."""
        if not verified:
            return self.threshold
        question = self.threshold if self.candidate_threshold is None else self.candidate_threshold
        if self.evidence_threshold is None:
            return question
        if entry is None:
            return min(question, self.evidence_threshold)
        return self.evidence_threshold if entry.evidence else question

    def lookup(self, vector: np.ndarray) -> QAHit | None:
        """The nearest answered, fresh entry if its similarity is ≥ τ, counted as a hit; else
        None (cosine alone: no check, no freshness; a verified lookup is the answer layer's,
        assistant/answer/qa_memory.py). An entry the user refused is passed over for questions
        no more similar than the refused one."""
        hits = self.candidates(vector, verified=False)  # one at most
        if hits:
            self.count_hit(hits[0].entry.id)
        return hits[0] if hits else None

    def candidates(self, vector: np.ndarray, verified: bool) -> list[QAHit]:
        """The entries a hit may be, nearest first; nothing is counted or changed. Unverified:
        the nearest entry, if its similarity is ≥ τ. Verified: among the CANDIDATES nearest, those
        with similarity ≥ their floor (the candidate threshold, or the evidence threshold for an
        entry with evidence lines), to be checked in this order; the first the check accepts is
        the hit, a refused one is just another question and stays as it is. Either way an entry
        is passed over for questions no more similar than one the user refused it for. A list,
        not a generator: the caller's checks run after the bank is done (a generator would have
        the bank resumed, and closed, from the answer layer between them)."""
        floor = self.floor(verified)
        limit = CANDIDATES if verified else 1
        out = []
        for hit in islice(self._ranked(vector), limit):
            if hit.similarity < floor:
                break
            if hit.similarity < self.floor(verified, hit.entry):
                continue
            if hit.similarity <= hit.entry.refused_at:
                continue
            out.append(hit)
        return out

    @unless_full("a refused QA answer")
    def refuse(self, entry_id: int, similarity: float) -> None:
        """The user said the entry's answer does not answer a question `similarity` away: it is
        served from now on only to questions more similar than that."""
        write(
            self.db,
            "UPDATE qa_entries SET refused_at = max(refused_at, ?) WHERE id = ?",
            [similarity, entry_id],
        )

    def _ranked(self, vector: np.ndarray, answered_only: bool = True) -> Iterator[QAHit]:
        """Usable entries among the 32 most similar, most similar first."""
        ids, matrix = self._vectors()
        if not len(ids):
            return
        sims = matrix @ vector.astype(np.float32)
        for idx in np.argsort(-sims)[:32]:
            entry = self.get(int(ids[idx]))
            if entry and (not answered_only or (entry.answer is not None and not entry.stale)):
                yield QAHit(entry, float(sims[idx]))

    @unless_full("a QA hit's count")
    def count_hit(self, entry_id: int) -> None:
        """The entry was served: one more hit, used now (eviction keeps the most used)."""
        write(
            self.db,
            "UPDATE qa_entries SET hits = hits + 1, last_used = ? WHERE id = ?",
            [time.time(), entry_id],
        )

    def vector(self, entry_id: int) -> np.ndarray:
        """The entry's question vector, from this bank's encoder (re-embedded if need be)."""
        sql = "SELECT embedding, encoder FROM qa_entries WHERE id = ?"
        blob, encoder = self.db.execute(sql, [entry_id]).fetchone()
        if encoder != self.encoder:
            self._vectors()
            blob, encoder = self.db.execute(sql, [entry_id]).fetchone()
        if encoder != self.encoder:
            raise ValueError(
                f"QA entry {entry_id} was embedded by {encoder or 'an unnamed encoder'}, not "
                f"{self.encoder or 'the unnamed one'}, and this bank has no embedder to redo it"
            )
        return np.frombuffer(blob, dtype=np.float32)

    def get(self, entry_id: int) -> QAEntry | None:
        row = self.db.execute(f"SELECT {COLUMNS} FROM qa_entries WHERE id = ?", [entry_id])
        found = row.fetchone()
        return entry_of(found) if found else None

    @unless_full("the QA entry")
    def add(
        self,
        question: str,
        vector: np.ndarray,
        answer: str | None,
        sources: Sequence[str] = (),
        knowledge_version: int = 0,
        origin: str = "user",
        watermark: int = 0,
        evidence: Sequence[tuple[int, str]] = (),
        judged: bool = False,  # a reader confirmed its quote (QAEntry.judged)
    ) -> int:
        blob = np.asarray(vector, dtype=np.float32).tobytes()
        now = time.time()
        with transaction(self.db):
            entry_id = self.db.execute(
                "INSERT INTO qa_entries (question, embedding, answer, sources, knowledge_version, "
                "origin, size, created, answered_at, last_used, chunk_watermark, encoder, "
                "evidence, judged) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    question,
                    blob,
                    answer,
                    json.dumps(list(sources)),
                    knowledge_version,
                    origin,
                    entry_size(question, answer, blob),
                    now,
                    now if answer is not None else None,
                    now,
                    watermark,
                    self.encoder,
                    evidence_json(evidence),
                    int(judged),
                ],
            ).lastrowid
            self.evict(keep=entry_id)
        return entry_id

    @unless_full("the QA entry's answer")
    def set_answer(
        self,
        entry_id: int,
        answer: str,
        sources: Sequence[str],
        version: int,
        watermark: int = 0,
        evidence: Sequence[tuple[int, str]] = (),
        origin: str | None = None,  # who answered it now (None: kept as it was)
        judged: bool = False,  # a reader confirmed the new answer's quote
    ) -> None:
        with transaction(self.db):
            self.db.execute(
                "UPDATE qa_entries SET answer = ?, sources = ?, knowledge_version = ?, stale = 0, "
                "chunk_watermark = ?, answered_at = ?, evidence = ?, origin = coalesce(?, origin), "
                "judged = ?, size = length(question) + length(embedding) + ? WHERE id = ?",
                [
                    answer,
                    json.dumps(list(sources)),
                    version,
                    watermark,
                    time.time(),
                    evidence_json(evidence),
                    origin,
                    int(judged),
                    len(answer.encode()),
                    entry_id,
                ],
            )
            self.evict(keep=entry_id)

    @unless_full("a QA entry's judged quote")
    def mark_judged(self, entry_id: int) -> None:
        """A reader confirmed the entry's quote when it served it: served as judged from now on
        (until its answer is written again)."""
        write(self.db, "UPDATE qa_entries SET judged = 1 WHERE id = ?", [entry_id])

    @unless_full("a QA entry still holding")
    def confirm(self, entry_id: int, watermark: int) -> None:
        """The answer still holds with every chunk up to `watermark`."""
        write(
            self.db, "UPDATE qa_entries SET chunk_watermark = ? WHERE id = ?", [watermark, entry_id]
        )

    @unless_full("stale QA entries", False)
    def mark_stale(self, entry_ids: Sequence[int]) -> bool:
        """True; False (in a user's question only) when the database had no room for it."""
        write(
            self.db,
            f"UPDATE qa_entries SET stale = 1 WHERE id IN ({','.join('?' * len(entry_ids))})",
            list(entry_ids),
        )
        return True

    def entries(self) -> list[QAEntry]:
        """Every entry, oldest first."""
        return self._select("1")

    def answered(self, stale: bool = False) -> list[QAEntry]:
        """The answered entries that are fresh (or, with `stale`, marked stale), oldest first."""
        return self._select("answer IS NOT NULL AND stale = ?", [int(stale)])

    def pending(self) -> list[QAEntry]:
        """The entries with no answer yet (predicted questions kept as KV only), oldest first."""
        return self._select("answer IS NULL")

    def most_used(self, limit: int) -> list[tuple[int, int, float]]:
        """(id, hits, last used) of the answered, fresh entries, most used first (ties: most
        recently used), `limit` at most."""
        rows = self.db.execute(
            "SELECT id, hits, last_used FROM qa_entries WHERE answer IS NOT NULL "
            "AND stale = 0 ORDER BY hits DESC, last_used DESC LIMIT ?",
            [limit],
        )
        return [tuple(r) for r in rows.fetchall()]

    def chunk_uses(self, origin_prefix: str) -> Counter[int]:
        """How many entries whose origin starts with `origin_prefix` were made from each chunk
        (precompute's access-ranked plan counts the predicted questions' chunks)."""
        rows = self.db.execute(
            "SELECT sources FROM qa_entries WHERE origin LIKE ? || '%'", [origin_prefix]
        )
        counts: Counter[int] = Counter()
        for (sources,) in rows.fetchall():
            counts.update(set(chunk_ids_of(json.loads(sources))))
        return counts

    def _select(self, where: str, params: Sequence = ()) -> list[QAEntry]:
        rows = self.db.execute(
            f"SELECT {COLUMNS} FROM qa_entries WHERE {where} ORDER BY id", list(params)
        )
        return [entry_of(r) for r in rows.fetchall()]

    def used_bytes(self) -> int:
        return int(self.db.execute("SELECT coalesce(sum(size), 0) FROM qa_entries").fetchone()[0])

    def evict(self, keep: int | None = None) -> int:
        """Drop least-frequently-used entries (ties: least recently used) until under budget."""
        with transaction(self.db):
            used = self.used_bytes()
            if used <= self.budget_bytes:
                return 0
            dropped = 0
            rows = self.db.execute("SELECT id, size FROM qa_entries ORDER BY hits, last_used")
            for entry_id, size in rows.fetchall():
                if used <= self.budget_bytes:
                    break
                if entry_id != keep:
                    self.db.execute("DELETE FROM qa_entries WHERE id = ?", [entry_id])
                    used -= size
                    dropped += 1
            return dropped

    def stats(self) -> dict[str, int]:
        return bank_stats(self.db)


def bank_stats(db: Database) -> dict[str, int]:
    """Entries (answered, pending, stale), all-time hits and bytes, read from `db` alone: no
    encoder, no write (the cache screen's counts, cache/counts.py)."""
    entries, answered, stale, hits, size = db.execute(
        "SELECT count(*), count(answer), coalesce(sum(stale), 0), coalesce(sum(hits), 0), "
        "coalesce(sum(size), 0) FROM qa_entries"
    ).fetchone()
    pending = entries - answered
    return {"entries": entries, "answered": answered, "pending": pending, "stale": stale,
            "hits": hits, "bytes": int(size)}  # fmt: skip
