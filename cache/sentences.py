"""Sentence vectors of chunks: the evidence segment embeds every sentence of a prompt's chunks,
per question. Those vectors depend on the chunk's text and the encoder only, so they are kept
here, keyed by both, filled when a chunk is first used or precomputed, and read back after.

Stored as float16 and always read back through float16, whether just computed or stored long
ago: the evidence lines (and so the prompt) of a question do not depend on what was cached.
Least recently used rows beyond `max_rows` are dropped.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
from sqlite_utils import Database

from cache.db import transaction, write
from cache.room import unless_full

MAX_ROWS = 5000  # chunks; a row is ~0.8 KB per sentence


def rounded(vectors: np.ndarray) -> np.ndarray:
    """`vectors` as stored: through float16, back to float32."""
    return np.asarray(vectors, dtype=np.float16).astype(np.float32)


class SentenceVectors:
    """The `sentence_vectors` table's owner."""

    def __init__(self, db: Database, max_rows: int = MAX_ROWS) -> None:
        self.db = db
        self.max_rows = max_rows

    def get(self, model: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of `keys` (rows in sentence order), those found only."""
        if not keys:
            return {}
        marks = ",".join("?" * len(keys))
        rows = self.db.execute(
            "SELECT key, n, dim, vectors FROM sentence_vectors "
            f"WHERE model = ? AND key IN ({marks})",
            [model, *keys],
        ).fetchall()
        found = {
            key: np.frombuffer(blob, dtype=np.float16).astype(np.float32).reshape(n, dim)
            for key, n, dim, blob in rows
            if len(blob) == 2 * n * dim  # a damaged row is computed afresh
        }
        if found:
            self._used(model, list(found))
        return found

    @unless_full("when sentence vectors were last used")
    def _used(self, model: str, keys: list[str]) -> None:
        write(
            self.db,
            f"UPDATE sentence_vectors SET last_used = ? WHERE model = ? "
            f"AND key IN ({','.join('?' * len(keys))})",
            [time.time(), model, *keys],
        )

    @unless_full("a chunk's sentence vectors")
    def put(self, model: str, key: str, vectors: np.ndarray) -> None:
        n, dim = vectors.shape
        blob = np.asarray(vectors, dtype=np.float16).tobytes()
        with transaction(self.db):
            self.db.execute(
                "INSERT OR REPLACE INTO sentence_vectors (model, key, n, dim, vectors, last_used) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [model, key, n, dim, blob, time.time()],
            )
            self.db.execute(
                "DELETE FROM sentence_vectors WHERE rowid IN (SELECT rowid FROM sentence_vectors "
                "ORDER BY last_used DESC, rowid DESC LIMIT -1 OFFSET ?)",
                [self.max_rows],
            )

    def count(self) -> int:
        return self.db.execute("SELECT count(*) FROM sentence_vectors").fetchone()[0]
