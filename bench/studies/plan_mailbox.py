"""The scaled mailbox and the question stream of bench/studies/plan.py.

The mailbox is the demo corpus with (scale − 1) distractor chunks per demo chunk, each drawn
around a random demo chunk as bench/scale_corpus.py draws them (its vector that chunk's plus
noise, its text a sample of that chunk's words plus rare tokens), every document shuffled into
one order: chunk ids are the age that newest-first planning reads, so the demo's own mail is
spread over the mailbox's age. Copies of the demo mbox (bench/import.py --copies) would not do:
identical chunk texts share one KV node, so the distinct chunks would stay the demo's.

The stream: the pool is the mail and notes questions (data/qa); every other one, by id, is a
*past* question, asked before precompute. The *future* stream, measured afterwards, is each past
question's paraphrase (paraphrases.jsonl) or rewording (repeats.jsonl) where there is one — a
*revisit* — and every held-out pool question — *new*.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

from _common import QA_FILES, REPO  # noqa: E402
from _synthetic import BulkDoc, bulk_insert, put_vectors  # noqa: E402
from scale_corpus import NOISE, make_seeds, noisy, text  # noqa: E402

from assistant.knowledge.store import KnowledgeStore  # noqa: E402

PARAPHRASES = REPO / "data" / "qa" / "paraphrases.jsonl"
REPEATS = REPO / "data" / "qa" / "repeats.jsonl"


@dataclass(frozen=True)
class Stream:
    past: list[str]
    revisit: list[str]  # the past questions' topics asked again in other words
    new: list[str]  # held-out questions on topics never asked


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def question_stream() -> Stream:
    pool = sorted((row for path in QA_FILES for row in _jsonl(path)), key=lambda r: r["id"])
    past, held = pool[::2], pool[1::2]
    asked = {r["stored"]: r["asked"] for r in _jsonl(PARAPHRASES)}
    reworded = {r["of"]: r["question"] for r in _jsonl(REPEATS) if r["kind"] != "repeat"}
    revisit = [asked.get(r["question"]) or reworded.get(r["id"]) for r in past]
    return Stream(
        [r["question"] for r in past], [q for q in revisit if q], [r["question"] for r in held]
    )


@dataclass(frozen=True)
class Doc:
    kind: str  # email | note
    key: str
    title: str
    chunks: list[tuple[str, np.ndarray]]  # text, vector


def grow(source: KnowledgeStore, target: KnowledgeStore, model: str, scale: int) -> dict:
    """Fill the empty `target` with `source`'s documents and `scale` − 1 distractor chunks per
    source chunk, shuffled (seeded) into one id order; every chunk gets its vector."""
    ids, vectors = source.embedding_matrix(model)
    texts = dict(zip(*source.chunk_texts(), strict=True))
    seeds = make_seeds(vectors, [texts[int(i)] for i in ids])
    rng = np.random.default_rng(15)
    topics = rng.integers(0, len(ids), (scale - 1) * len(ids))
    near = noisy(seeds.vectors[topics], NOISE, rng)
    docs = _documents(source, dict(zip(ids.tolist(), vectors, strict=True)))
    docs += [
        Doc("email", f"s{n}@plan", f"s{n}", [(text(seeds, int(t), rng), near[n])])
        for n, t in enumerate(topics)
    ]
    shuffled = [docs[i] for i in rng.permutation(len(docs))]
    for start in range(0, len(shuffled), 2_000):
        _insert(target, shuffled[start : start + 2_000], model)
    return {"demo_chunks": len(ids), "chunks": target.count_chunks()}


def _documents(store: KnowledgeStore, vectors: dict[int, np.ndarray]) -> list[Doc]:
    rows = store.db.execute(
        "SELECT d.id, d.kind, d.source_key, d.title, c.id, c.text FROM documents d "
        "JOIN chunks c ON c.document_id = d.id ORDER BY d.id, c.ordinal"
    ).fetchall()
    docs: dict[int, Doc] = {}
    for doc_id, kind, key, title, chunk_id, chunk in rows:
        doc = docs.setdefault(doc_id, Doc(kind, key, title or "", []))
        doc.chunks.append((chunk, vectors[chunk_id]))
    return list(docs.values())


def _insert(store: KnowledgeStore, docs: list[Doc], model: str) -> None:
    """Insert `docs` in order (a run of one kind per bulk insert), then their vectors."""
    start = 0
    while start < len(docs):
        end = start
        while end < len(docs) and docs[end].kind == docs[start].kind:
            end += 1
        run = docs[start:end]
        bulk = [BulkDoc(d.key, d.title, [t for t, _ in d.chunks]) for d in run]
        made = bulk_insert(store, bulk, kind=run[0].kind)
        rows = np.array([v for d in run for _, v in d.chunks], dtype=np.float32)
        put_vectors(store, model, made, rows)
        start = end
