"""Hybrid retrieval: BM25 and dense cosine, each over every chunk, fused.

The default fusion sums the two scores after z-normalising each over the whole knowledge bank,
with equal weights: a chunk that one retriever ranks first keeps its strong score even when the
other ranks it outside its top 50, where reciprocal rank fusion would give it one term only.
On the demo questions it beats both retrievers and RRF; on DL19 (web passages) RRF is a little
better (bench/results/retrieval.json). `fusion = "rrf"` selects RRF.

Both indexes are built once per change of the knowledge bank and saved under <home>/index, keyed
by the bank's version counters: a question never rebuilds them, start-up only loads them.
"""

from __future__ import annotations

import logging
import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

import numpy as np

from assistant.config_sections import RetrievalSettings
from assistant.home import make_private_dir, replace_atomically
from assistant.knowledge.bm25 import BM25Index
from assistant.knowledge.ivf import present
from assistant.knowledge.large import LargeSearch
from assistant.knowledge.store import ChunkRecord, KnowledgeStore
from cache.protocols import Embedder

Mode = Literal["hybrid", "bm25", "dense"]
log = logging.getLogger(__name__)
# a filtered search on a large home scores every chunk the filter leaves exactly when it leaves
# at most this many; above, FTS5 and the IVF index are asked for more candidates and those the
# filter leaves are kept. For a person's filter (their mail is together, not spread) the widened
# search kept 0 of the exact top 10 in 17 of 18 cases on a 300k-chunk home, while exact scoring
# of up to 11,808 chunks took at most 0.18 s on 2 cores (bench/results/subset_exact.json)
EXACT_SUBSET_MAX = 10_000


# what a chunk of mail meeting a condition that ranks (mail/filters.py: a name several people
# have) adds to its fused score for each unit of the condition's weight, in the z-units of the
# default fusion (bench/results/filters_people.json chose it)
PREFERRED_BONUS = 1.0


class Where(Protocol):
    """A filter on mail (assistant/mail/filters.py: Filters) as a WHERE clause over the
    documents table, alias `d`, and the conditions that rank instead of filtering."""

    def sql(self) -> tuple[str, list]: ...

    def __bool__(self) -> bool: ...

    def narrows(self) -> bool: ...

    def preferred(self) -> list[tuple[str, list, float]]: ...


@dataclass(frozen=True)
class Hit:
    chunk_id: int
    score: float  # RRF score for hybrid, else the retriever's own score
    bm25_rank: int | None
    dense_rank: int | None
    record: ChunkRecord


@dataclass(frozen=True)
class Ranked:
    ids: np.ndarray  # chunk ids, best first
    scores: np.ndarray


def top_n(ids: np.ndarray, scores: np.ndarray, n: int, positive_only: bool = False) -> Ranked:
    if positive_only:
        keep = scores > 0
        ids, scores = ids[keep], scores[keep]
    n = min(n, len(ids))
    if n == 0:
        return Ranked(ids[:0], scores[:0])
    part = np.argpartition(-scores, n - 1)[:n]
    order = part[np.lexsort((ids[part], -scores[part]))]
    return Ranked(ids[order], scores[order])


Stats = tuple[float, float]  # (mean, standard deviation) of one retriever's scores
STATS_SAMPLE = 4_096  # rows of the dense index a filtered search reads the bank's cosine stats from


def zscore(scores: np.ndarray, stats: Stats | None = None) -> np.ndarray:
    mean, std = stats if stats is not None else _stats(scores)
    return (scores - mean) / std if std > 0 else np.zeros_like(scores)


def _stats(scores: np.ndarray) -> Stats:
    wide = scores.astype(np.float64)
    return (float(wide.mean()), float(wide.std())) if len(wide) else (0.0, 0.0)


def zscore_fusion(
    bm25: tuple[np.ndarray, np.ndarray],
    dense: tuple[np.ndarray, np.ndarray],
    stats: tuple[Stats, Stats] | None = None,
):
    """(ids, 0.5·z(bm25) + 0.5·z(dense)) over the BM25 ids; a chunk without a vector yet gets
    the mean dense score (z = 0). `stats`: the whole bank's (BM25, cosine) mean and deviation,
    for scores of a filter's chunks only (a filter then keeps the order of what it keeps)."""
    ids, bm = bm25
    dense_ids, dense_scores = dense
    bm_stats, dense_stats = stats if stats is not None else (None, None)
    z_dense = np.zeros(len(ids))
    if len(dense_ids):
        pos = np.clip(np.searchsorted(dense_ids, ids), 0, len(dense_ids) - 1)
        known = dense_ids[pos] == ids
        z_dense[known] = zscore(dense_scores.astype(np.float64), dense_stats)[pos[known]]
    return ids, 0.5 * zscore(bm.astype(np.float64), bm_stats) + 0.5 * z_dense


def rrf(rankings: list[Ranked], k: int) -> Ranked:
    """Reciprocal rank fusion: score = Σ 1 / (k + rank), rank counted from 1."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, chunk_id in enumerate(ranking.ids.tolist(), start=1):
            fused[chunk_id] = fused.get(chunk_id, 0.0) + 1.0 / (k + rank)
    items = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))
    return Ranked(np.array([i for i, _ in items], dtype=np.int64), np.array([s for _, s in items]))


Preferred = list[tuple[np.ndarray, float]]  # (chunk ids, weight)


def _bonus(ids: np.ndarray, preferred: Preferred, bonus: float) -> np.ndarray:
    """`bonus` times the weight of each of the `preferred` id sets an id is in."""
    out = np.zeros(len(ids))
    for chosen, weight in preferred:
        out += bonus * weight * np.isin(ids, chosen)
    return out


def _spread(scores: np.ndarray) -> float:
    """One z-unit of a single retriever's scores."""
    return float(scores.std()) if len(scores) else 0.0


def _lifted(ranked: Ranked | None, preferred: Preferred, bonus: float) -> Ranked | None:
    """The candidates `ranked` holds re-ordered with the bonus (the paths that score only
    their candidates: a preferred chunk outside them is not brought in)."""
    if ranked is None or not preferred or not len(ranked.ids):
        return ranked
    return top_n(ranked.ids, ranked.scores + _bonus(ranked.ids, preferred, bonus), len(ranked.ids))


def _within(ids: np.ndarray, allowed: np.ndarray | None, score) -> tuple[np.ndarray, np.ndarray]:
    """(ids, scores) of the index's rows whose id is in `allowed` (None: every row); `score`
    gets the rows' positions."""
    if allowed is None:
        return ids, score(slice(None))
    if not len(ids):
        return ids, score(slice(None))
    found, pos = present(ids, allowed)
    return found, score(pos)


class DenseIndex:
    def __init__(self, ids: np.ndarray, matrix: np.ndarray) -> None:
        self.ids = ids
        self.matrix = matrix
        self._sample: np.ndarray | None = None

    def scores(self, query_vector: np.ndarray) -> np.ndarray:
        if not len(self.ids):
            return np.zeros(0, dtype=np.float32)
        return self.matrix @ query_vector.astype(np.float32)

    def scores_at(self, query_vector: np.ndarray, positions: np.ndarray | slice) -> np.ndarray:
        """Cosine of the rows at `positions` only (a filtered search scans no other row)."""
        if not len(self.ids):
            return np.zeros(0, dtype=np.float32)
        return self.matrix[positions] @ query_vector.astype(np.float32)

    def stats(self, query_vector: np.ndarray) -> Stats:
        """Mean and deviation of the cosine over the bank, from about STATS_SAMPLE evenly
        spaced rows (every row of a small bank), copied out once. Summed by einsum on this
        thread: BLAS would wake its threads for it, which cost more than the sum on a busy
        machine (bench/results/filters_scale_people.json)."""
        if self._sample is None:
            step = max(1, len(self.ids) // STATS_SAMPLE)
            self._sample = np.ascontiguousarray(self.matrix[::step], dtype=np.float32)
        return _stats(np.einsum("ij,j->i", self._sample, query_vector.astype(np.float32)))

    def vectors(self, chunk_ids: Sequence[int]) -> dict[int, np.ndarray]:
        """The vectors of those of `chunk_ids` that have one (ids are in ascending order)."""
        found, pos = present(self.ids, chunk_ids)
        return {int(c): self.matrix[p] for c, p in zip(found, pos, strict=True)}

    def save(self, path: Path) -> None:
        arrays = {"ids": self.ids, "matrix": self.matrix}
        replace_atomically(path, lambda tmp: np.savez(tmp, **arrays), ".npz")

    @classmethod
    def load(cls, path: Path) -> DenseIndex:
        with np.load(path, allow_pickle=False) as z:
            return cls(z["ids"], z["matrix"])


class Retriever:
    def __init__(
        self,
        store: KnowledgeStore,
        embedder: Embedder,
        index_dir: Path | None,
        settings: RetrievalSettings | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.index_dir = index_dir
        self.settings = settings or RetrievalSettings()
        self._bm25: tuple[int, BM25Index] | None = None
        self._dense: tuple[int, DenseIndex] | None = None
        self._chunks: tuple[int, int] = (-1, 0)  # (chunks version, chunk count)
        self._large: LargeSearch | None = None

    def large(self) -> LargeSearch | None:
        """The large-home search (FTS5 + hot/cold IVF) when the home has at least
        `large_min_chunks` chunks and an index folder, else None (the exact in-memory path)."""
        version = self.store.version("chunks")
        if self._chunks[0] != version:
            self._chunks = (version, self.store.count_chunks())
        if self.index_dir is None or self._chunks[1] < self.settings.large_min_chunks:
            return None
        if self._large is None:
            self._large = LargeSearch(self.store, self.index_dir, self.embedder.name, self.settings)
        return self._large

    def index_plan(self) -> dict:
        """Which indexes this home searches with, and the hot/cold plan of a large one."""
        large = self.large()
        if large is None:
            return {
                "kind": "in-memory: BM25 matrix + flat dense scan",
                "large_from_chunks": self.settings.large_min_chunks,
            }
        return large.describe()

    def search(
        self,
        query: str,
        k: int | None = None,
        mode: Mode = "hybrid",
        query_vector: np.ndarray | None = None,
        access_weight: float = 1.0,
        where: Where | None = None,
    ) -> list[Hit]:
        """The top `k` chunks; `access_weight` is what this question counts for in the large
        index's hot/cold plan (a predicted question: `settings.predicted_weight`). `where`
        narrows the candidates in SQL before ranking; with no words to rank by (or none that
        any mail it leaves has), the newest mails it leaves come first."""
        k = k or self.settings.top_k
        newest = where is not None and where.narrows()
        if newest and not query.strip():
            return self._newest(where, k)
        ranked, bm25, dense = self.rank(query, mode, query_vector, access_weight, where)
        if newest and not len(ranked.ids):
            return self._newest(where, k)
        ids = ranked.ids[:k]
        bm25_rank = {int(c): r for r, c in enumerate(bm25.ids.tolist(), 1)} if bm25 else {}
        dense_rank = {int(c): r for r, c in enumerate(dense.ids.tolist(), 1)} if dense else {}
        scores = dict(zip(ranked.ids.tolist(), ranked.scores.tolist(), strict=True))
        return [
            Hit(
                rec.chunk_id,
                scores[rec.chunk_id],
                bm25_rank.get(rec.chunk_id),
                dense_rank.get(rec.chunk_id),
                rec,
            )
            for rec in self.store.chunk_records(ids.tolist())
        ]

    def _newest(self, where: Where, k: int) -> list[Hit]:
        ids = self.store.mail.newest_chunk_ids(*where.sql(), k)
        return [Hit(r.chunk_id, 0.0, None, None, r) for r in self.store.chunk_records(ids)]

    def rank(
        self,
        query: str,
        mode: Mode = "hybrid",
        query_vector: np.ndarray | None = None,
        access_weight: float = 1.0,
        where: Where | None = None,
    ) -> tuple[Ranked, Ranked | None, Ranked | None]:
        """(final ranking, BM25 candidates, dense candidates) over the whole knowledge bank, or
        over the chunks `where` leaves; a chunk meeting a condition of `where` that ranks
        gains PREFERRED_BONUS times its weight. Filtered, the fusion's z-scores are those of
        the whole bank (as the large path's are): a filter keeps the order of the mail it
        keeps."""
        allowed = self.store.mail.chunk_ids(*where.sql()) if where and where.narrows() else None
        preferred = [
            (self.store.mail.chunk_ids(clause, params), weight)
            for clause, params, weight in (where.preferred() if where else [])
        ]
        if allowed is not None and not len(allowed):  # no chunk meets the filter
            none = Ranked(allowed, np.zeros(0))
            return none, none if mode != "dense" else None, none if mode != "bm25" else None
        large = self.large()
        if large is not None:

            def vector() -> np.ndarray:
                if query_vector is not None:
                    return query_vector
                return self.embedder.embed_batch([query])[0]

            if allowed is None:
                found = large.rank(query, mode, vector, access_weight)
            elif len(allowed) <= EXACT_SUBSET_MAX:
                found = large.rank_subset(query, mode, vector, allowed)
            else:
                found = large.rank_within(query, mode, vector, allowed, access_weight)
            ranked, bm25, dense = (Ranked(*r) if r is not None else None for r in found)
            return _lifted(ranked, preferred, PREFERRED_BONUS), bm25, dense
        n = self.settings.candidates
        bm25 = dense = None
        stats: list[Stats] = []  # the bank's, for a filter's chunks
        if mode in ("hybrid", "bm25"):
            index = self.bm25_index()
            every = index.scores(query)
            bm25_all = _within(index.ids, allowed, lambda pos: every[pos])
            bm25 = top_n(*bm25_all, n, positive_only=True)
            stats.append(_stats(every))
        if mode in ("hybrid", "dense"):
            index = self.dense_index()
            vector = query_vector
            if vector is None:
                vector = self.embedder.embed_batch([query])[0]
            dense_all = _within(index.ids, allowed, lambda pos: index.scores_at(vector, pos))
            dense = top_n(*dense_all, n)
            stats.append(index.stats(vector) if allowed is not None else (0.0, 0.0))
        if mode == "bm25":
            return _lifted(bm25, preferred, PREFERRED_BONUS * _spread(bm25_all[1])), bm25, None
        if mode == "dense":
            return _lifted(dense, preferred, PREFERRED_BONUS * _spread(dense_all[1])), None, dense
        if self.settings.fusion == "rrf":
            fused = rrf([bm25, dense], self.settings.rrf_k)
            return _lifted(fused, preferred, PREFERRED_BONUS / self.settings.rrf_k), bm25, dense
        bank = (stats[0], stats[1]) if allowed is not None else None
        ids, fused = zscore_fusion(bm25_all, dense_all, bank)
        return top_n(ids, fused + _bonus(ids, preferred, PREFERRED_BONUS), n), bm25, dense

    def vectors(self, chunk_ids: Sequence[int]) -> dict[int, np.ndarray]:
        """The dense vectors of `chunk_ids` (a chunk not embedded yet has none)."""
        large = self.large()
        if large is not None:
            return large.vectors(list(chunk_ids))
        return self.dense_index().vectors(chunk_ids)

    def bm25_index(self) -> BM25Index:
        version = self.store.version("chunks")
        if self._bm25 is None or self._bm25[0] != version:
            self._bm25 = (version, self._load_or_build("bm25", version, self._build_bm25))
        return self._bm25[1]

    def dense_index(self) -> DenseIndex:
        version = self.store.version("vectors")
        if self._dense is None or self._dense[0] != version:
            self._dense = (version, self._load_or_build("dense", version, self._build_dense))
        return self._dense[1]

    def _build_bm25(self) -> BM25Index:
        ids, texts = self.store.chunk_texts()
        return BM25Index.build(ids, texts)

    def _build_dense(self) -> DenseIndex:
        return DenseIndex(*self.store.embedding_matrix(self.embedder.name))

    def _load_or_build(self, kind: str, version: int, build):
        loader = BM25Index.load if kind == "bm25" else DenseIndex.load
        if self.index_dir is None:
            return build()
        model = re.sub(r"[^A-Za-z0-9_.-]", "_", self.embedder.name) if kind == "dense" else "okapi"
        tag = f"{self.store.identity()}-{model}"
        path = self.index_dir / f"{kind}-{tag}-{version}.npz"
        if path.exists():
            try:
                return loader(path)
            except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
                log.warning("%s: unreadable index file (%s); rebuilding it", path, exc)
                path.unlink(missing_ok=True)
        index = build()
        make_private_dir(self.index_dir)
        for old in self.index_dir.glob(f"{kind}-{tag}-*.npz"):
            old.unlink(missing_ok=True)
        index.save(path)
        return index
