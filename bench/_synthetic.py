"""Synthetic stores for the scale benchmarks: random unit vectors, an embedder that returns them
at once, and documents and chunks inserted in bulk (bypassing the importer), so a bench measures
what surrounds the model at sizes no real mailbox here has."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
from _common import EMBED_DIM  # first: it puts this checkout first on sys.path

from assistant.ingest.chunking import count_tokens
from assistant.knowledge.store import KnowledgeStore


def unit_vectors(n: int, rng: np.random.Generator, dim: int = EMBED_DIM) -> np.ndarray:
    vectors = rng.standard_normal((n, dim), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


class FakeEmbedder:
    """Random unit vectors instantly: measures everything around the model, not the model."""

    def __init__(self, name: str = "fake", seed: int = 0) -> None:
        self.name = name
        self._rng = np.random.default_rng(seed)

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        return unit_vectors(len(texts), self._rng)


@dataclass(frozen=True)
class BulkDoc:
    key: str
    title: str
    chunks: list[str]
    sender: str = ""


def bulk_insert(store: KnowledgeStore, docs: Sequence[BulkDoc], kind: str = "note") -> np.ndarray:
    """Insert documents and chunks with two executemany calls in one transaction (bypassing the
    per-document upsert); bump the chunks version; return the new chunk ids in order."""
    now = datetime.now(UTC).isoformat()
    doc_rows, chunk_rows = [], []
    next_chunk = _max_id(store, "chunks") + 1
    for doc_id, doc in enumerate(docs, start=_max_id(store, "documents") + 1):
        body = "\n\n".join(doc.chunks)
        digest = hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()
        message_id = doc.key if kind == "email" else None
        doc_rows.append(
            (doc_id, kind, doc.key, message_id, doc.sender, doc.title, doc.key, digest, body, now)
        )
        for ordinal, text in enumerate(doc.chunks):
            chunk_hash = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
            chunk_rows.append((next_chunk, doc_id, ordinal, text, count_tokens(text), chunk_hash))
            next_chunk += 1
    with store.transaction():
        store.db.conn.executemany(
            "INSERT INTO documents (id, kind, source_key, message_id, sender, title, source_path, "
            "content_hash, body, imported_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            doc_rows,
        )
        store.db.conn.executemany(
            "INSERT INTO chunks (id, document_id, ordinal, text, token_count, content_hash) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            chunk_rows,
        )
        store.db.execute(
            "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'chunks_version'"
        )
    return np.array([row[0] for row in chunk_rows], dtype=np.int64)


def _max_id(store: KnowledgeStore, table: str) -> int:
    return int(store.db.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0])


def put_vectors(store: KnowledgeStore, model: str, ids: np.ndarray, vectors: np.ndarray) -> None:
    """store.put_embeddings in batches of 10,000 (one transaction each, as the importer does)."""
    for start in range(0, len(ids), 10_000):
        stop = start + 10_000
        store.put_embeddings(model, ids[start:stop].tolist(), vectors[start:stop])
