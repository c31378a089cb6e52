"""Corpora and query traces for bench/scale.py, grown from real embeddings and texts.

Each synthetic chunk is drawn around a real chunk (a demo chunk or a DL19 passage, its *topic*):
its vector is the real one plus Gaussian noise (cosine ≈ 0.85 to it), so the corpus keeps the
real vectors' cluster structure; its text is a sample of the real text's words plus a few tokens
of a heavy-tailed synthetic vocabulary, so document frequencies grow with the corpus as a real
vocabulary does rather than every word occurring in a fixed share of chunks.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass

import _common  # noqa: F401  (first: it puts this checkout first on sys.path)
import numpy as np

from assistant.knowledge.bm25 import tokenize
from assistant.knowledge.store import KnowledgeStore

NOISE = 0.6  # norm of the noise added to a unit vector: cosine to the topic ≈ 1/√(1 + 0.36)
QUERY_NOISE = 0.5
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Seeds:
    vectors: np.ndarray  # float32, unit rows
    words: list[list[str]]  # content words of each seed text


def make_seeds(vectors: np.ndarray, texts: list[str]) -> Seeds:
    words = [tokenize(t) or _WORD.findall(t.lower()) or ["empty"] for t in texts]
    return Seeds(np.asarray(vectors, dtype=np.float32), words)


def noisy(base: np.ndarray, noise: float, rng: np.random.Generator) -> np.ndarray:
    out = base + rng.standard_normal(base.shape, dtype=np.float32) * (
        noise / np.sqrt(base.shape[1])
    )
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def vectors(seeds: Seeds, topics: np.ndarray, seed: int = 1, batch: int = 50_000) -> np.ndarray:
    """float16 vectors, one per topic entry, generated batch by batch."""
    rng = np.random.default_rng(seed)
    out = np.empty((len(topics), seeds.vectors.shape[1]), dtype=np.float16)
    for start in range(0, len(topics), batch):
        part = topics[start : start + batch]
        out[start : start + len(part)] = noisy(seeds.vectors[part], NOISE, rng)
    return out


def text(seeds: Seeds, topic: int, rng: np.random.Generator) -> str:
    words = seeds.words[topic]
    keep = [w for w in words if rng.random() < 0.6] or words[:1]
    rare = [f"t{int(z)}" for z in rng.zipf(1.4, size=3)]
    return " ".join(keep + rare)


def insert(store: KnowledgeStore, seeds: Seeds, topics: np.ndarray, batch: int = 50_000) -> None:
    """One document and one chunk per topic entry, in transactions of `batch` (FTS follows)."""
    rng = np.random.default_rng(2)
    for start in range(0, len(topics), batch):
        rows = list(_rows(seeds, topics[start : start + batch], start, rng))
        with store.transaction():
            store.db.conn.executemany(
                "INSERT INTO documents (id, kind, source_key, message_id, title, content_hash, "
                "body, imported_at) VALUES (?, 'email', ?, ?, ?, ?, '', '2026-01-01')",
                [(i, f"s{i}", f"s{i}@bench", f"s{i}", h) for i, _, h in rows],
            )
            store.db.conn.executemany(
                "INSERT INTO chunks (id, document_id, ordinal, text, token_count, content_hash) "
                "VALUES (?, ?, 0, ?, ?, ?)",
                [(i, i, t, len(t.split()), h) for i, t, h in rows],
            )
    store.db.execute(
        "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'chunks_version'"
    )


def _rows(seeds: Seeds, topics: np.ndarray, start: int, rng) -> Iterator[tuple[int, str, str]]:
    for offset, topic in enumerate(topics.tolist()):
        body = text(seeds, topic, rng)
        yield start + offset + 1, body, hashlib.blake2b(body.encode(), digest_size=8).hexdigest()


@dataclass(frozen=True)
class Trace:
    topics: np.ndarray
    vectors: np.ndarray  # float32
    texts: list[str]


def trace(seeds: Seeds, kind: str, n: int, seed: int) -> Trace:
    """Questions near their topic's chunks: a skewed (Zipf) or a uniform choice of topics."""
    rng = np.random.default_rng(seed)
    order_rng = np.random.default_rng(99)  # the same popular topics in every skewed trace
    count = len(seeds.vectors)
    if kind == "skewed":
        ranks = np.arange(1, count + 1, dtype=np.float64) ** -1.1
        topics = order_rng.permutation(count)[rng.choice(count, size=n, p=ranks / ranks.sum())]
    else:
        topics = rng.integers(0, count, n)
    vecs = noisy(seeds.vectors[topics], QUERY_NOISE, rng).astype(np.float32)
    texts = [
        " ".join(rng.choice(seeds.words[t], size=min(5, len(seeds.words[t])), replace=False))
        for t in topics
    ]
    return Trace(topics, vecs, texts)


def exact_top(
    corpus: np.ndarray, queries: np.ndarray, k: int = 10, batch: int = 100_000
) -> np.ndarray:
    """Row numbers of each query's exact top k by cosine (ties by row)."""
    best_s = np.full((len(queries), 0), -np.inf, dtype=np.float32)
    best_i = np.zeros((len(queries), 0), dtype=np.int64)
    for start in range(0, len(corpus), batch):
        scores = queries @ corpus[start : start + batch].astype(np.float32).T
        s = np.concatenate([best_s, scores], axis=1)
        i = np.concatenate(
            [best_i, np.broadcast_to(np.arange(start, start + scores.shape[1]), scores.shape)],
            axis=1,
        )
        keep = np.argsort(-s, axis=1, kind="stable")[:, :k]
        best_s, best_i = np.take_along_axis(s, keep, 1), np.take_along_axis(i, keep, 1)
    return best_i
