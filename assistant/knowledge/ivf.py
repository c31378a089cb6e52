"""Dense search for large homes: an inverted-file (IVF) index whose partitions live in one file.

faiss (k-means on a sample, then the coarse quantizer) splits the vectors into `nlist` clusters;
a query scans the `nprobe` clusters whose centroids are nearest. The vectors are stored as
float16, grouped by cluster, in <home>/index/ivf-…/codes.f16. Only the *hot* clusters are
resident (hotcold.py chooses them under a memory budget); a cold cluster is read from the file
when a query probes it, so the resident size is the hot set plus the ids and centroids.

Every cluster's bytes carry a CRC-32, checked when the cluster is read: a damaged file raises
IndexDamaged and the retriever rebuilds it, it is never searched.
"""

from __future__ import annotations

import json
import os
import shutil
import zipfile
import zlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import faiss

FORMAT = 1
HEAD, CODES = "head.npz", "codes.f16"
_HEAD_KEYS = {"centroids", "offsets", "ids", "crcs", "mean", "cov"}
_CODE = np.dtype(np.float16)
# the share of an index's vectors that may come and go after its k-means before `update` leaves
# the next change to a full build (new mail put in the clusters of older mail)
REFIT = 0.1


def _faiss():
    """faiss, imported where a large home first needs it, not at every start: a small home's
    one-shot `ask` never does (bench/results/cli_start.json)."""
    import faiss

    return faiss


class IndexDamaged(RuntimeError):
    """An index file is missing, truncated or fails its checksum: rebuild it."""


def default_nlist(n: int) -> int:
    """About 2·√n clusters (500 vectors each at 1M), at least 40 vectors each."""
    return max(1, min(n // 40, int(2 * np.sqrt(n))))


def train_centroids(sample: np.ndarray, nlist: int, seed: int = 7) -> np.ndarray:
    """Spherical k-means centroids of `sample` (float32, unit rows)."""
    if nlist == 1:
        mean = sample.mean(axis=0, dtype=np.float64)
        return (mean / max(np.linalg.norm(mean), 1e-12)).astype(np.float32)[None, :]
    kmeans = _faiss().Kmeans(sample.shape[1], nlist, niter=10, seed=seed, spherical=True)
    kmeans.train(np.ascontiguousarray(sample, dtype=np.float32))
    return kmeans.centroids.astype(np.float32)


def _quantizer(centroids: np.ndarray) -> faiss.IndexFlatIP:
    quantizer = _faiss().IndexFlatIP(centroids.shape[1])
    quantizer.add(centroids)
    return quantizer


def assign(centroids: np.ndarray, vectors: np.ndarray, batch: int = 65_536) -> np.ndarray:
    """The nearest centroid of each vector."""
    quantizer = _quantizer(centroids)
    out = np.empty(len(vectors), dtype=np.int64)
    for start in range(0, len(vectors), batch):
        part = np.ascontiguousarray(vectors[start : start + batch], dtype=np.float32)
        out[start : start + batch] = quantizer.search(part, 1)[1][:, 0]
    return out


def build(
    directory: Path, ids: np.ndarray, vectors: np.ndarray, nlist: int | None = None, seed: int = 7
) -> IvfIndex:
    """Write an index of `vectors` (n × d, unit rows, float32 or float16) to `directory`."""
    n, dim = vectors.shape
    nlist = nlist or default_nlist(n)
    rng = np.random.default_rng(seed)
    sample = vectors[np.sort(rng.choice(n, size=min(n, nlist * 40), replace=False))]
    centroids = train_centroids(sample, nlist, seed)
    lists = assign(centroids, vectors)
    order = np.argsort(lists, kind="stable")
    offsets = np.searchsorted(lists[order], np.arange(nlist + 1)).astype(np.int64)
    tmp = _fresh(directory)
    crcs = _write_codes(tmp / CODES, vectors, order, offsets)
    mean, cov = moments(vectors)
    head = {"centroids": centroids, "offsets": offsets, "ids": ids[order], "crcs": crcs}
    about = {"vectors": n, "dim": dim, "nlist": nlist, "trained": n, "changed": 0}
    return _saved(tmp, directory, head | {"mean": mean, "cov": cov}, about)


def _fresh(directory: Path) -> Path:
    tmp = directory.with_name(directory.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True, mode=0o700)
    return tmp


def _saved(tmp: Path, directory: Path, head: dict[str, np.ndarray], about: dict) -> IvfIndex:
    np.savez(tmp / HEAD, format=FORMAT, **head)
    (tmp / "about.json").write_text(json.dumps(about))
    shutil.rmtree(directory, ignore_errors=True)
    os.replace(tmp, directory)
    return IvfIndex.load(directory)


def update(
    old: IvfIndex, directory: Path, ids: np.ndarray, fetch: Callable[[np.ndarray], np.ndarray]
) -> IvfIndex | None:
    """`old` made the index of `ids` (every vector now, ascending) in `directory`: the vectors
    of ids gone dropped, those of new ids (`fetch(new)`: their rows, float32) put in their
    nearest cluster, the mean and covariance moved by what went and came; the centroids kept.
    None where the vectors changed since the centroids were trained by over REFIT of them: a
    new build is due (its k-means), as it is for a first index."""
    about = {"trained": len(old), "changed": 0} | old.about()
    gone, new = np.setdiff1d(old.ids, ids), np.setdiff1d(ids, old.ids)
    changed = int(about["changed"]) + len(gone) + len(new)
    if not len(ids) or changed > REFIT * int(about["trained"]):
        return None
    added = np.asarray(fetch(new), dtype=np.float32).reshape(len(new), old.dim)
    lists = assign(old.centroids, added) if len(new) else np.zeros(0, dtype=np.int64)
    n = len(old)
    total, outer = old.mean * n, (old.cov + np.outer(old.mean, old.mean)) * n
    tmp = _fresh(directory)
    offsets, kept_ids, crcs = [0], [], []
    with (tmp / CODES).open("wb") as out:
        for c in range(old.nlist):
            block, cids = old.cluster(c), old.ids[old.offsets[c] : old.offsets[c + 1]]
            if len(gone):
                keep = ~np.isin(cids, gone)
                dropped = block[~keep].astype(np.float64)
                total, outer = total - dropped.sum(axis=0), outer - dropped.T @ dropped
                block, cids = block[keep], cids[keep]
            data = np.concatenate([block, added[lists == c].astype(_CODE)]).tobytes()
            crcs.append(zlib.crc32(data))
            out.write(data)
            kept_ids += [cids, new[lists == c]]
            offsets.append(offsets[-1] + len(cids) + int((lists == c).sum()))
    os.chmod(tmp / CODES, 0o600)
    wide = added.astype(np.float64)
    total, outer, count = total + wide.sum(axis=0), outer + wide.T @ wide, offsets[-1]
    mean = total / count
    head = {"centroids": old.centroids, "offsets": np.array(offsets, dtype=np.int64),
            "ids": np.concatenate(kept_ids).astype(np.int64), "crcs": np.array(crcs, np.uint32),
            "mean": mean, "cov": outer / count - np.outer(mean, mean)}  # fmt: skip
    about |= {"vectors": count, "changed": changed}
    return _saved(tmp, directory, head, about)


def _write_codes(path: Path, vectors: np.ndarray, order: np.ndarray, offsets: np.ndarray):
    crcs = np.zeros(len(offsets) - 1, dtype=np.uint32)
    with path.open("wb") as out:
        for cluster in range(len(crcs)):
            rows = order[offsets[cluster] : offsets[cluster + 1]]
            data = np.ascontiguousarray(vectors[rows], dtype=_CODE).tobytes()
            crcs[cluster] = zlib.crc32(data)
            out.write(data)
    os.chmod(path, 0o600)
    return crcs


def moments(vectors: np.ndarray, batch: int = 65_536) -> tuple[np.ndarray, np.ndarray]:
    """Mean and covariance of the rows: a query's mean and spread of cosine over the whole bank
    are then q·μ and √(qᵀ C q), with no scan."""
    n, dim = vectors.shape
    total, outer = np.zeros(dim), np.zeros((dim, dim))
    for start in range(0, n, batch):
        part = np.asarray(vectors[start : start + batch], dtype=np.float64)
        total += part.sum(axis=0)
        outer += part.T @ part
    mean = total / max(n, 1)
    return mean, outer / max(n, 1) - np.outer(mean, mean)


def present(sorted_ids: np.ndarray, wanted: Sequence[int] | np.ndarray):
    """(ids, positions): those of `wanted` that stand in `sorted_ids` (ascending), in the order
    asked, and where they stand there. The flat index's lookups share it (retrieval.py)."""
    wanted = np.asarray(wanted, dtype=np.int64)
    if not len(sorted_ids) or not len(wanted):
        return wanted[:0], np.zeros(0, dtype=np.intp)
    pos = np.clip(np.searchsorted(sorted_ids, wanted), 0, len(sorted_ids) - 1)
    found = sorted_ids[pos] == wanted
    return wanted[found], pos[found]


class IvfIndex:
    def __init__(self, directory: Path, head: dict[str, np.ndarray]) -> None:
        self.directory = directory
        self.centroids = head["centroids"]
        self.offsets = head["offsets"]
        self.ids = head["ids"]
        self.crcs = head["crcs"]
        self.mean, self.cov = head["mean"], head["cov"]
        self.dim = self.centroids.shape[1]
        self.nprobe = 32
        self.quantizer = _quantizer(self.centroids)
        self.hot: dict[int, np.ndarray] = {}
        self.probes = np.zeros(len(self.crcs), dtype=np.int64)  # since start-up, per cluster
        self.hot_probes = 0
        self._by_id = np.argsort(self.ids, kind="stable")
        self._sorted_ids = self.ids[self._by_id]
        self._fd = os.open(directory / CODES, os.O_RDONLY)

    @classmethod
    def load(cls, directory: Path) -> IvfIndex:
        """Open a saved index; raises IndexDamaged if a part is missing or of the wrong size."""
        try:  # a file cut short or damaged inside is not a zip file, or fails a CRC-32
            with np.load(directory / HEAD, allow_pickle=False) as z:
                head = {k: z[k] for k in z.files}
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            raise IndexDamaged(f"{directory / HEAD}: {exc}") from exc
        if int(head.get("format", -1)) != FORMAT or not head.keys() >= _HEAD_KEYS:
            raise IndexDamaged(f"{directory / HEAD}: not index format {FORMAT}")
        codes = directory / CODES
        want = int(head["offsets"][-1]) * head["centroids"].shape[1] * _CODE.itemsize
        if not codes.exists() or codes.stat().st_size != want:
            raise IndexDamaged(f"{codes}: missing or not {want} bytes")
        return cls(directory, head)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __len__(self) -> int:
        return len(self.ids)

    def about(self) -> dict:
        """What the build wrote beside the index (an older build's: no "trained" or
        "changed" count; `update` reads it as trained on what it holds)."""
        try:
            return dict(json.loads((self.directory / "about.json").read_text()))
        except (OSError, ValueError):
            return {}

    @property
    def nlist(self) -> int:
        return len(self.crcs)

    def list_bytes(self) -> np.ndarray:
        return np.diff(self.offsets) * self.dim * _CODE.itemsize

    def resident_bytes(self) -> int:
        """What stays in memory: hot clusters, ids (by cluster, sorted, and the permutation),
        centroids and the covariance."""
        fixed = self.ids.nbytes * 3 + self.centroids.nbytes + self.cov.nbytes + self.offsets.nbytes
        return fixed + sum(block.nbytes for block in self.hot.values())

    def _read(self, cluster: int) -> np.ndarray:
        start, stop = int(self.offsets[cluster]), int(self.offsets[cluster + 1])
        size = (stop - start) * self.dim * _CODE.itemsize
        data = os.pread(self._fd, size, start * self.dim * _CODE.itemsize)
        if len(data) != size or zlib.crc32(data) != int(self.crcs[cluster]):
            raise IndexDamaged(f"{self.directory / CODES}: cluster {cluster} fails its checksum")
        return np.frombuffer(data, dtype=_CODE).reshape(stop - start, self.dim)

    def cluster(self, cluster: int) -> np.ndarray:
        block = self.hot.get(cluster)
        return block if block is not None else self._read(cluster)

    def set_hot(self, clusters: Iterable[int]) -> None:
        """Keep exactly `clusters` resident (read and checked once each)."""
        wanted = {int(c) for c in clusters}
        self.hot = {c: self.hot[c] if c in self.hot else self._read(c) for c in sorted(wanted)}

    def nearest_clusters(self, vectors: np.ndarray, nprobe: int | None = None) -> np.ndarray:
        queries = np.ascontiguousarray(np.atleast_2d(vectors), dtype=np.float32)
        return self.quantizer.search(queries, nprobe or self.nprobe)[1]

    def search(self, vector: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(ids, cosine) of the best `n` vectors in the probed clusters, best first."""
        clusters = [int(c) for c in self.nearest_clusters(vector)[0] if c >= 0]
        self.probes[clusters] += 1
        self.hot_probes += sum(c in self.hot for c in clusters)
        block = np.concatenate([self.cluster(c) for c in clusters])
        ids = np.concatenate([self.ids[self.offsets[c] : self.offsets[c + 1]] for c in clusters])
        # einsum, not `@`: BLAS's threads right after faiss's OpenMP ones wait for a core
        scores = np.einsum("ij,j->i", block.astype(np.float32), np.asarray(vector, np.float32))
        n = min(n, len(ids))
        if n == 0:
            return ids[:0], scores[:0]
        part = np.argpartition(-scores, n - 1)[:n]
        order = part[np.lexsort((ids[part], -scores[part]))]
        return ids[order], scores[order]

    def hit_rate(self) -> float | None:
        total = int(self.probes.sum())
        return self.hot_probes / total if total else None

    def score_stats(self, vector: np.ndarray) -> tuple[float, float]:
        """Mean and standard deviation of the query's cosine over every stored vector."""
        q = np.asarray(vector, dtype=np.float64)
        return float(q @ self.mean), float(np.sqrt(max(q @ self.cov @ q, 0.0)))

    def vectors(self, chunk_ids: Sequence[int]) -> dict[int, np.ndarray]:
        """The stored (float16) vectors of those of `chunk_ids` in the index, as float32."""
        found, pos = present(self._sorted_ids, chunk_ids)
        rows = self._by_id[pos]
        clusters = np.searchsorted(self.offsets, rows, side="right") - 1
        blocks = {int(c): self.cluster(int(c)) for c in np.unique(clusters)}
        return {
            int(chunk_id): blocks[int(c)][row - self.offsets[c]].astype(np.float32)
            for chunk_id, row, c in zip(found, rows, clusters, strict=True)
        }
