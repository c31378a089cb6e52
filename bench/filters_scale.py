"""Filtered vs unfiltered search latency on a large synthetic home (issue 34: a filtered search
is no slower than an unfiltered one at 100k chunks).

    python bench/filters_scale.py [--chunks 100000] [--source /work/eval/home] [--repeats 2]
                                  [--path small|large|both]

The home's mails are the real mailbox's chunk texts, repeated under 500 synthetic senders and
dates spread over three years, four chunks a mail, with random unit vectors (the model is left
out: the query vector is given, the same for both paths). The 47 questions of
data/qa/skilling_filters.jsonl are the query texts; the filters are a sender, a month, and both.
`small` is the in-memory path (BM25 matrix + flat scan: the app's below
`large_min_chunks`), `large` FTS5 + IVF. Writes bench/results/filters_scale.json.
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"

# ruff: noqa: E402
import argparse
import hashlib
import json
import sqlite3
import tempfile
import time
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

import numpy as np
from _common import REPO, log, percentile, print_table, write_results
from _synthetic import FakeEmbedder, put_vectors

from assistant.config_sections import RetrievalSettings
from assistant.knowledge.db import open_db
from assistant.knowledge.retrieval import Retriever
from assistant.knowledge.store import KnowledgeStore
from assistant.mail import address_book
from assistant.mail.people import People
from assistant.mail.query import parse

PER_MAIL = 4
SENDERS = 500
START = date(1999, 1, 1)
DAYS = 3 * 365
TODAY = date(2001, 11, 20)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--source", type=Path, default=Path("/work/eval/home"))
    parser.add_argument("--set", type=Path, default=REPO / "data/qa/skilling_filters.jsonl")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--path", choices=["small", "large", "both"], default="small")
    parser.add_argument("--out", default="filters_scale")
    return parser.parse_args()


def source_texts(home: Path) -> list[str]:
    with sqlite3.connect(f"file:{home / 'knowledge.db'}?mode=ro", uri=True) as db:
        return [r[0] for r in db.execute("SELECT text FROM chunks ORDER BY id")]


def build(store: KnowledgeStore, texts: list[str], n: int) -> None:
    """n chunks in n / PER_MAIL mails, a sender and a day each (seeded)."""
    rng = np.random.default_rng(7)
    docs, chunks = [], []
    for doc in range(1, n // PER_MAIL + 1):
        sender = int(rng.integers(SENDERS))
        day = START + timedelta(days=int(rng.integers(DAYS)))
        body = [texts[(doc * PER_MAIL + i) % len(texts)] for i in range(PER_MAIL)]
        digest = hashlib.blake2b(f"{doc}".encode(), digest_size=8).hexdigest()
        docs.append((doc, f"k{doc}", f"k{doc}@bench", f"person{sender}@bench.org",
                     f"Person {sender}", f"{day.isoformat()}T09:00:00-07:00", f"Mail {doc}",
                     digest, "\n\n".join(body)))  # fmt: skip
        for i, text in enumerate(body):
            cid = (doc - 1) * PER_MAIL + i + 1
            chunks.append((cid, doc, i, f"{text} m{doc}", len(text.split()), f"{digest}{i}"))
    with store.transaction():
        store.db.conn.executemany(
            "INSERT INTO documents (id, kind, source_key, message_id, sender, sender_name, date, "
            "title, content_hash, body, imported_at) VALUES (?, 'email', ?, ?, ?, ?, ?, ?, ?, ?, "
            "'2001-11-20')",
            docs,
        )
        store.db.conn.executemany(
            "INSERT INTO chunks (id, document_id, ordinal, text, token_count, content_hash) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            chunks,
        )
        store.db.execute(
            "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'chunks_version'"
        )


def queries(path: Path) -> list[tuple[str, dict[str, str]]]:
    """(question, filters) for each question and filter kind, filters from a seeded draw."""
    rng = np.random.default_rng(11)
    out = []
    for line in path.read_text().splitlines():
        question = json.loads(line)["question"]
        sender = f"person{int(rng.integers(SENDERS))}@"
        month = START + timedelta(days=int(rng.integers(DAYS)))
        out.append((question, {
            "none": "",
            "from": f"from:{sender}",
            "month": f"date:{month:%Y-%m}",
            "from+month": f"from:{sender} date:{month:%Y-%m}",
        }))  # fmt: skip
    return out


def timings(retriever: Retriever, people: People, qs, repeats: int) -> dict[str, dict]:
    vectors = FakeEmbedder(seed=5).embed_batch([q for q, _ in qs])
    out: dict[str, list[float]] = {}
    for question, vector, (_, terms) in zip([q for q, _ in qs], vectors, qs, strict=True):
        for kind, term in terms.items():
            query = parse(f"{term} {question}", TODAY, people)
            retriever.search(query.text, 10, query_vector=vector, where=query.filters)  # warm
            for _ in range(repeats):
                t0 = time.perf_counter()
                retriever.search(query.text, 10, query_vector=vector, where=query.filters)
                out.setdefault(kind, []).append(time.perf_counter() - t0)
    return {k: {"p50_s": percentile(v, 50), "p90_s": percentile(v, 90), "n": len(v)}
            for k, v in out.items()}  # fmt: skip


def main() -> None:
    args = parse_args()
    texts = source_texts(args.source)
    qs = queries(args.set)
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="filters-scale-") as tmp:
        store = KnowledgeStore(open_db(Path(tmp) / "knowledge.db"))
        log(f"building {args.chunks:,} chunks")
        build(store, texts, args.chunks)
        ids = np.asarray(store.chunk_ids(), dtype=np.int64)
        embedder = FakeEmbedder(seed=1)
        put_vectors(store, embedder.name, ids, embedder.embed_batch(["x"] * len(ids)))
        mail = store.mail
        people = address_book.build(
            address_book.MailRows(mail.senders(), mail.recipients(), mail.lines())
        )
        paths = ["small", "large"] if args.path == "both" else [args.path]
        for path in paths:
            least = 10**9 if path == "small" else 1
            settings = replace(RetrievalSettings(), large_min_chunks=least)
            retriever = Retriever(store, embedder, Path(tmp) / "index", settings)
            log(f"{path}: building its indexes")
            retriever.search("warm up", 10, query_vector=embedder.embed_batch(["w"])[0])
            results[path] = timings(retriever, people, qs, args.repeats)
    rows = [[f"{path}: {kind}", t["p50_s"] * 1000, t["p90_s"] * 1000,
             t["p50_s"] / results[path]["none"]["p50_s"]]
            for path, kinds in results.items() for kind, t in kinds.items()]  # fmt: skip
    print_table(
        f"search latency, {args.chunks:,} chunks (query vector given)",
        ["path: filter", "p50 ms", "p90 ms", "p50 / unfiltered"],
        rows,
    )
    data = {"chunks": args.chunks, "mails": args.chunks // PER_MAIL, "latency": results}
    print(f"wrote {write_results(args.out, data, {k: str(v) for k, v in vars(args).items()})}")


if __name__ == "__main__":
    main()
