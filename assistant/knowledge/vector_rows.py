"""The knowledge bank's vector reads and writes (a part of KnowledgeStore, the embeddings
table's one owner): which chunks still lack a vector of an encoder, storing a batch of vectors,
and the whole matrix the dense index is built from. The store provides `db`, `transaction`,
`version`, `count_chunks`, `_bump_version` and the `_all_embedded` memo."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sqlite_utils import Database

from assistant.knowledge.db import rows_in


class VectorRows:
    """Mixed into KnowledgeStore (see above)."""

    db: Database
    _all_embedded: dict[str, tuple[tuple[int, int], bool]]

    def count_unembedded(self, model: str) -> int:
        """Chunks without a vector from `model`: a chunk holds at most one vector and a vector
        is its chunk's (migration 0014), so the chunks less `model`'s vectors, two counts on
        indexes rather than a join reading every vector's page."""
        embedded, chunks = self.embedding_counts(model)
        return chunks - embedded

    def has_unembedded(self, model: str) -> bool:
        """Whether some chunk lacks a vector from `model` (count_unembedded)."""
        return self.count_unembedded(model) > 0

    def all_embedded(self, model: str) -> bool:
        """Whether every chunk has a vector from `model`, checked once per change of the chunks
        or the vectors (an import still embedding changes them with every batch)."""
        versions = (self.version("chunks"), self.version("vectors"))
        known = self._all_embedded.get(model)
        if known is None or known[0] != versions:
            known = (versions, not self.has_unembedded(model))
            self._all_embedded[model] = known
        return known[1]

    def embedding_counts(self, model: str) -> tuple[int, int]:
        """(chunks with a vector from `model`, all chunks)."""
        q = self.db.execute
        embedded = q("SELECT count(*) FROM embeddings WHERE model = ?", [model]).fetchone()[0]
        return int(embedded), self.count_chunks()

    def end_vector_models(self) -> set[str]:
        """The encoders of the vectors of the first and the last chunk that has one: what a
        home's vectors are, read in two primary-key lookups (counting them all would read every
        vector, a whole-table scan on each start). An import and a re-embedding go in id order,
        so the two differ only while one is half-way."""
        rows = self.db.execute(
            "SELECT model FROM (SELECT model FROM embeddings ORDER BY chunk_id LIMIT 1) "
            "UNION SELECT model FROM (SELECT model FROM embeddings ORDER BY chunk_id DESC LIMIT 1)"
        )
        return {str(model) for (model,) in rows.fetchall()}

    def embedding_models(self) -> dict[str, int]:
        """Vectors stored per encoder name (a chunk holds one vector, of one encoder)."""
        rows = self.db.execute("SELECT model, count(*) FROM embeddings GROUP BY model")
        return {str(model): int(n) for model, n in rows.fetchall()}

    def unembedded(self, model: str, limit: int, after: int = 0) -> list[tuple[int, str]]:
        """Chunks without a vector from `model`, by id, from id `after` on: paging by id keeps
        each batch from rescanning the chunks embedded before it."""
        return self.db.execute(
            "SELECT c.id, c.text FROM chunks c LEFT JOIN embeddings e ON e.chunk_id = c.id "
            "WHERE c.id > ? AND (e.chunk_id IS NULL OR e.model != ?) ORDER BY c.id LIMIT ?",
            [after, model, limit],
        ).fetchall()

    def put_embeddings(self, model: str, ids: Sequence[int], vectors: np.ndarray) -> None:
        vectors = np.asarray(vectors, dtype=np.float32)
        with self.transaction():
            self._upsert_vectors(model, ids, vectors)

    def _upsert_vectors(self, model: str, ids: Sequence[int], vectors: np.ndarray) -> None:
        self.db["embeddings"].upsert_all(
            (
                {"chunk_id": int(i), "model": model, "dim": vectors.shape[1], "vector": v.tobytes()}
                for i, v in zip(ids, vectors, strict=True)
            ),
            pk="chunk_id",
        )
        self._bump_version("vectors")

    def embedding_matrix(self, model: str) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids, float32 matrix of normalised vectors), in chunk-id order."""
        rows = self.db.execute(
            "SELECT chunk_id, dim, vector FROM embeddings WHERE model = ? ORDER BY chunk_id",
            [model],
        ).fetchall()
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32)
        return ids, matrix.reshape(len(rows), rows[0][1])

    def embedding_ids(self, model: str) -> np.ndarray:
        """The ids of the chunks with a vector from `model`, ascending (the vectors unread)."""
        rows = self.db.execute(
            "SELECT chunk_id FROM embeddings WHERE model = ? ORDER BY chunk_id", [model]
        )
        return np.fromiter((r[0] for r in rows), dtype=np.int64)

    def vectors_of(self, model: str, chunk_ids: Sequence[int]) -> np.ndarray:
        """The float32 vectors from `model` of `chunk_ids` (each has one), in their order."""
        keys = [int(i) for i in chunk_ids]
        sql = "SELECT chunk_id, vector FROM embeddings WHERE model = ? AND chunk_id IN ({})"
        found: dict[int, bytes] = dict(rows_in(self.db, sql, keys, [model]))
        return np.array([np.frombuffer(found[i], dtype=np.float32) for i in keys], np.float32)
