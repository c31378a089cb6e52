"""Retrieval for large homes: BM25 from FTS5, dense from the hot/cold IVF index, fused over the
two candidate lists.

The small-home fusion z-normalises each retriever's scores over every chunk. Here no query sees
every chunk, so each candidate gets both exact scores (BM25 by rowid, cosine from its stored
vector) and the whole-bank mean and spread come without a scan: the cosine's from the vectors'
mean and covariance (exact), BM25's estimated from the terms' document frequencies (fts.py).
"""

from __future__ import annotations

import logging
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np

from assistant.config_sections import RetrievalSettings
from assistant.home import make_private_dir
from assistant.knowledge import ivf
from assistant.knowledge.fts import ChunkFts, query_terms
from assistant.knowledge.hotcold import AccessCounts, Plan, plan_hot
from assistant.knowledge.store import KnowledgeStore

log = logging.getLogger(__name__)
Ranking = tuple[np.ndarray, np.ndarray]  # (chunk ids, scores), best first
WIDEN = 20  # a filtered dense search asks the IVF index for at most this many times the list


def top(ids: np.ndarray, scores: np.ndarray, n: int) -> Ranking:
    order = np.lexsort((ids, -scores))[:n]
    return ids[order], scores[order]


def _lookup(ids: np.ndarray, known: Ranking, score: Callable[[np.ndarray], np.ndarray]):
    """Scores of `ids`: from `known` where it has them, from `score` for the rest."""
    out = np.zeros(len(ids))
    pos = np.searchsorted(ids, known[0])
    out[pos] = known[1]
    missing = np.ones(len(ids), dtype=bool)
    missing[pos] = False
    if missing.any():
        out[missing] = score(ids[missing])
    return out


def _within(found: Ranking, ids: np.ndarray, n: int) -> Ranking:
    """The first `n` of a ranking that are among `ids`."""
    keep = np.isin(found[0], ids)
    return found[0][keep][:n], found[1][keep][:n]


class LargeSearch:
    def __init__(
        self, store: KnowledgeStore, index_dir: Path, model: str, settings: RetrievalSettings
    ) -> None:
        self.store = store
        self.index_dir = index_dir
        self.model = model
        self.settings = settings
        self.fts = ChunkFts(store.db, settings.fts_max_matches)
        self._ivf: tuple[int, ivf.IvfIndex, AccessCounts] | None = None
        self.plan: Plan | None = None
        self._count = (-1, 0)  # (chunks version, chunks)

    # -- the dense index ------------------------------------------------------------------------

    def _tag(self) -> str:
        model = re.sub(r"[^A-Za-z0-9_.-]", "_", self.model)
        return f"{self.store.identity()}-{model}"

    def index(self) -> ivf.IvfIndex:
        """The IVF index of the current vectors: loaded, or built when missing or damaged.
        While an import is still embedding, the last built index serves (a build reads every
        vector, far too slow to repeat per batch); the new vectors join once it is done."""
        version = self.store.version("vectors")
        if not self.store.all_embedded(self.model):
            version = self._ivf[0] if self._ivf else self._saved_version() or version
        if self._ivf is None or self._ivf[0] != version:
            try:
                self._open(version, rebuild=False)
            except ivf.IndexDamaged as exc:
                log.warning("%s; rebuilding it", exc)
                self._open(version, rebuild=True)
        assert self._ivf is not None
        return self._ivf[1]

    def _saved_version(self) -> int | None:
        """The vectors version of the index on disk, if one is there."""
        prefix = f"ivf-{self._tag()}-"
        for path in self.index_dir.glob(f"{prefix}*"):
            if path.name[len(prefix) :].isdigit():  # not another model's whose name goes on
                return int(path.name[len(prefix) :])
        return None

    def _open(self, version: int, rebuild: bool) -> None:
        path = self.index_dir / f"ivf-{self._tag()}-{version}"
        fresh = rebuild or not path.exists()
        previous = self._previous() if fresh and not rebuild else None
        current, self._ivf = self._ivf, None
        try:
            if not fresh:
                index = ivf.IvfIndex.load(path)
            else:
                index = self._updated(previous, path) or self.rebuild(path)
        finally:
            if current is not None:
                current[1].close()
        index.nprobe = self.settings.ivf_nprobe
        counts = AccessCounts(index.nlist, self.index_dir / f"access-{self._tag()}.npy")
        self._ivf = (version, index, counts)
        self.replan()  # reads (and checks) the hot clusters

    def _previous(self) -> ivf.IvfIndex | None:
        """The index of an earlier version of the vectors: the one open, else the one saved."""
        if self._ivf is not None:
            return self._ivf[1]
        saved = self._saved_version()
        if saved is None:
            return None
        try:
            return ivf.IvfIndex.load(self.index_dir / f"ivf-{self._tag()}-{saved}")
        except ivf.IndexDamaged:
            return None

    def _updated(self, previous: ivf.IvfIndex | None, path: Path) -> ivf.IvfIndex | None:
        """`previous` brought to the vectors now (an import's few new mails: no k-means, no
        read of every vector, bench/results/commands_scale.json), or None: a build is due."""
        if previous is None:
            return None
        try:
            fetch = lambda ids: self.store.vectors_of(self.model, ids)  # noqa: E731
            index = ivf.update(previous, path, self.store.embedding_ids(self.model), fetch)
        except ivf.IndexDamaged as exc:
            log.warning("%s; building the index again", exc)
            return None
        finally:
            previous.close()
        if index is not None:  # the clusters are the same: their access counts hold
            for old in self.index_dir.glob(f"ivf-{self._tag()}-*"):
                if old != path:
                    shutil.rmtree(old, ignore_errors=True)
        return index

    def rebuild(self, path: Path) -> ivf.IvfIndex:
        make_private_dir(self.index_dir)
        for old in self.index_dir.glob(f"ivf-{self._tag()}-*"):
            shutil.rmtree(old, ignore_errors=True)
        for old in self.index_dir.glob(f"access-{self._tag()}.*"):
            old.unlink(missing_ok=True)  # the clusters change with the index
        ids, matrix = self.store.embedding_matrix(self.model)
        return ivf.build(path, ids, matrix)

    def replan(self) -> Plan:
        """Re-choose the resident clusters from the access counts (and save the counts)."""
        assert self._ivf is not None
        _, index, counts = self._ivf
        budget = self.settings.hot_memory_mb * 2**20
        self.plan = plan_hot(counts.counts, index.list_bytes(), budget)
        index.set_hot(self.plan.hot)
        counts.save()
        counts.since_plan = 0
        return self.plan

    def dense(self, vector: np.ndarray, n: int, weight: float) -> Ranking:
        if not self._searchable():
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        index = self.index()
        try:
            found = index.search(vector, n)
        except ivf.IndexDamaged as exc:
            log.warning("%s; rebuilding the index", exc)
            self._ivf = None
            index.close()
            shutil.rmtree(index.directory, ignore_errors=True)
            return self.dense(vector, n, weight)
        counts = self._ivf[2]
        clusters = index.nearest_clusters(vector)[0]
        counts.record(clusters[clusters >= 0], weight)
        if counts.since_plan >= self.settings.replan_every:
            self.replan()
        return found

    def vectors(self, chunk_ids: list[int]) -> dict[int, np.ndarray]:
        """The stored vectors of those of `chunk_ids` the index holds."""
        return self.index().vectors(chunk_ids) if self._searchable() else {}

    def _searchable(self) -> bool:
        """Dense search has an index to use: the vectors are complete (it is built if need be),
        or an import is embedding and an index built before it is there (BM25 alone until the
        first large import is embedded)."""
        if self.store.all_embedded(self.model):
            return self.store.has_vectors(self.model)
        return self._ivf is not None or self._saved_version() is not None

    # -- ranking ----------------------------------------------------------------------------

    def rank(
        self, query: str, mode: str, vector: Callable[[], np.ndarray], weight: float = 1.0
    ) -> tuple[Ranking | None, Ranking | None, Ranking | None]:
        """(fused, BM25, dense) rankings of `settings.candidates` chunks each."""
        n = self.settings.candidates
        bm25 = self.fts.search(query, n) if mode in ("hybrid", "bm25") else None
        q = vector() if mode in ("hybrid", "dense") else None
        dense = self.dense(q, n, weight) if q is not None else None
        if mode != "hybrid":
            return bm25 or dense, bm25, dense
        return self.fuse(query, q, bm25, dense), bm25, dense

    def rank_subset(
        self, query: str, mode: str, vector: Callable[[], np.ndarray], ids: np.ndarray
    ) -> tuple[Ranking | None, Ranking | None, Ranking | None]:
        """`rank` over the chunks `ids` only (a filter's few), each scored exactly: BM25 by
        rowid, cosine from its stored vector; fused as `rank` fuses."""
        n = self.settings.candidates
        bm25 = dense = None
        if mode in ("hybrid", "bm25"):
            b = self.fts.scores(query_terms(query), ids)
            bm25 = top(ids[b > 0], b[b > 0], n)
        q = vector() if mode in ("hybrid", "dense") else None
        if q is not None:
            found = self.vectors(ids.tolist())
            known = np.array([i for i in ids.tolist() if i in found], dtype=np.int64)
            cosine = np.array([float(found[i] @ q) for i in known.tolist()])
            dense = top(known, cosine, n)
        if mode != "hybrid":
            return bm25 or dense, bm25, dense
        return self.fuse(query, q, bm25, dense), bm25, dense

    def rank_within(
        self,
        query: str,
        mode: str,
        vector: Callable[[], np.ndarray],
        ids: np.ndarray,
        weight: float = 1.0,
    ) -> tuple[Ranking | None, Ranking | None, Ranking | None]:
        """`rank` among the chunks `ids` (too many to score one by one): BM25 over the FTS5
        matches among them (`ChunkFts.search(among=…)`), and the IVF index asked for as many
        more candidates as the filter keeps fewer of the home (at most WIDEN times), those
        outside it dropped: about the unfiltered search's cost."""
        n = self.settings.candidates
        widen = min(WIDEN, max(1, round(self.chunk_count() / max(len(ids), 1))))
        bm25 = dense = None
        if mode in ("hybrid", "bm25"):
            found = self.fts.search(query, n * widen, among=ids)
            bm25 = found[0][:n], found[1][:n]
        q = vector() if mode in ("hybrid", "dense") else None
        if q is not None:
            dense = _within(self.dense(q, n * widen, weight), ids, n)
        if mode != "hybrid":
            return bm25 or dense, bm25, dense
        return self.fuse(query, q, bm25, dense), bm25, dense

    def fuse(self, query: str, q: np.ndarray, bm25: Ranking, dense: Ranking) -> Ranking:
        """0.5·z(BM25) + 0.5·z(cosine) over the union of both candidate lists. Each list
        brings its own scores; only the other retriever's score of a candidate is looked up."""
        ids = np.union1d(bm25[0], dense[0])
        terms = query_terms(query)
        b = _lookup(ids, bm25, lambda missing: self.fts.scores(terms, missing))
        b_mean, b_std = self.fts.bank_stats(terms, self.chunk_count())
        if not len(dense[0]):
            return top(ids, b, self.settings.candidates)
        d_mean, d_std = self.index().score_stats(q)

        def cosine(missing: np.ndarray) -> np.ndarray:
            found = self.index().vectors(missing.tolist())
            return np.array([float(found[i] @ q) if i in found else d_mean for i in missing])

        d = _lookup(ids, dense, cosine)
        z_b = (b - b_mean) / b_std if b_std > 0 else np.zeros(len(ids))
        z_d = (d - d_mean) / d_std if d_std > 0 else np.zeros(len(ids))
        return top(ids, 0.5 * z_b + 0.5 * z_d, self.settings.candidates)

    def chunk_count(self) -> int:
        version = self.store.version("chunks")
        if self._count[0] != version:
            self._count = (version, self.store.count_chunks())
        return self._count[1]

    def describe(self) -> dict:
        """The index plan for `stats`: clusters, the hot set against its budget, and its hit
        rate (the share of the counted probes of asked and predicted questions it serves,
        and of this process's probes). An index not built yet is not built here."""
        out: dict = {"kind": "large: FTS5 BM25 + hot/cold IVF", "built": False}
        path = self.index_dir / f"ivf-{self._tag()}-{self.store.version('vectors')}"
        if self._ivf is None and not path.exists():
            return out
        index = self.index()
        assert self.plan is not None
        return out | {
            "built": True,
            "clusters": index.nlist,
            "nprobe": index.nprobe,
            "hot_clusters": len(self.plan.hot),
            "hot_mb": round(self.plan.hot_bytes / 2**20, 1),
            "budget_mb": round(self.plan.budget_bytes / 2**20, 1),
            "resident_mb": round(index.resident_bytes() / 2**20, 1),
            "file_mb": round(float(index.list_bytes().sum()) / 2**20, 1),
            "planned_hit_rate": round(self.plan.share_of_probes, 3),
            "hit_rate_this_process": self.hit_rate(),
        }

    def hit_rate(self) -> float | None:
        return self._ivf[1].hit_rate() if self._ivf else None
