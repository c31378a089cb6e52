"""Synthetic stores for the scale benchmarks: random unit vectors, an embedder that returns them
at once, documents and chunks inserted in bulk (bypassing the importer), and chunks shaped like
the demo's (its sentences resampled, names and numbers added), so that a bench measures what
surrounds the model at sizes no real mailbox here has."""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
from _common import EMBED_DIM  # first: it puts this checkout first on sys.path

from assistant.ingest.chunking import count_tokens
from assistant.knowledge.store import KnowledgeStore

NAMES = "Maya Daan Priya Åsa Bram Lotte Joris Femke Sven Ines Tomás Wei Anouk Karin Pieter".split()


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


def synthetic_docs(texts: list[str], n_chunks: int, seed: int = 7) -> list[BulkDoc]:
    """n_chunks chunks shaped like the demo's: its sentences resampled, names and numbers added."""
    rng = random.Random(seed)
    bodies = [t.split("\n", 1)[-1] for t in texts]  # without the header line
    sentences = [s for b in bodies for s in re.split(r"(?<=[.!?])\s+|\n+", b) if len(s) > 20]
    lengths = [len(t.split()) for t in texts]
    docs, made = [], 0
    while made < n_chunks:
        size = min(rng.choice((1, 1, 1, 2, 2, 3)), n_chunks - made)
        subject = f"{' '.join(rng.choice(sentences).split()[:6])} #{rng.randrange(10_000)}"
        sender = f"{rng.choice(NAMES)} {rng.choice(NAMES)}sen <p{rng.randrange(10**6)}@ex.org>"
        chunks = [
            synthetic_chunk(rng, sentences, rng.choice(lengths), subject) for _ in range(size)
        ]
        docs.append(BulkDoc(f"synthetic-{len(docs)}@bench", subject, chunks, sender))
        made += size
    return docs


def synthetic_chunk(rng: random.Random, sentences: list[str], words: int, subject: str) -> str:
    day = f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"
    parts = [f"From: {rng.choice(NAMES)} | Date: {day} | Subject: {subject}"]
    while sum(len(p.split()) for p in parts) < words:
        parts.append(rng.choice(sentences))
    parts.insert(rng.randrange(1, len(parts) + 1), f"{rng.choice(NAMES)} {rng.randrange(10**5)}.")
    return "\n".join(parts)
