"""Distinct context: near-duplicate pairs among the prompt's three chunks and source@3 before and
after merging near-duplicates (assistant/knowledge/distinct.py), and the measurement behind its
dense cosine bound.

    python bench/studies/distinct.py [--home DIR] [--out distinct]

The configured encoder's ([embedding] backend, ASSISTANT_EMBEDDING_BACKEND). Writes
bench/results/distinct.json (or --out).
"""

from __future__ import annotations

import os
import sys

os.environ["HF_HUB_OFFLINE"] = "1"  # never reach for the hub, even before the model loads

# ruff: noqa: E402
import argparse
import itertools
import math
import re
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

from _common import QA, load_qa, log, mean, percentile, print_table, require_demo, write_results
from _common import demo_context as open_demo
from retrieval import answer_found, is_source

from assistant.config import Settings
from assistant.knowledge.distinct import COSINE_BOUNDS, duplicates, shape
from assistant.knowledge.retrieval import Hit, Retriever
from assistant.knowledge.store import ChunkRecord
from assistant.rerank.selection import Selection

K = 3  # the prompt's chunks (AnswerSettings.context_chunks)
MARGIN = 0.03  # the bound sits this far above the most similar distinct pair, rounded up
Vectors = dict[int, np.ndarray]
_HEADER = re.compile(r"From: (?P<who>.*) \| Date: (?P<date>.*) \| Subject: (?P<subject>.*)")
_PREFIX = re.compile(r"^((re|fwd|fw|sv|aw)\s*:\s*|\[[^\]]*\]\s*)+", re.IGNORECASE)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, help="an imported demo home to reuse (copied)")
    parser.add_argument("--out", default="distinct", help="results file name (no .json)")
    return parser.parse_args()


# -- 1. the prompt's chunks, before and after -------------------------------------------------


def pair_kind(a: Hit, b: Hit, vectors: Vectors, bound: float) -> str | None:
    """'text' or 'cosine' when the two chunks are near-duplicates by the module's rules."""
    if duplicates(shape(a.record.text), shape(b.record.text)):
        return "text"
    if float(vectors[a.chunk_id] @ vectors[b.chunk_id]) >= bound:
        return "cosine"
    return None


def describe(qa: QA, hits: list[Hit], vectors: Vectors, bound: float) -> dict[str, Any]:
    kinds = [pair_kind(a, b, vectors, bound) for a, b in itertools.combinations(hits, 2)]
    return {
        "chunks": [h.chunk_id for h in hits],
        "duplicate_pair": any(kinds),
        "pair_kinds": sorted({k for k in kinds if k}),
        "source": any(is_source(h.record, qa) for h in hits),
        "answer": answer_found(qa, hits),
    }


def selection(retriever: Retriever, duplicates: str) -> Selection:
    settings = Settings()
    settings.answer.context_chunks, settings.answer.duplicates = K, duplicates
    return Selection(settings, retriever, None)  # the prompt's own selection, reranker off


def bench_selection(ctx, items: list[QA], bound: float) -> dict[str, Any]:
    retriever = ctx.retriever
    keep, merge = selection(retriever, "keep"), selection(retriever, "merge")
    rows = []
    for qa in items:
        vector = ctx.embedder.embed_batch([qa.question])[0]
        before, after = keep(qa.question, vector), merge(qa.question, vector)
        vectors = retriever.vectors([h.chunk_id for h in before + after])
        rows.append(
            {
                "question": qa.question,
                "kind": qa.kind,
                "before": describe(qa, before, vectors, bound),
                "after": describe(qa, after, vectors, bound),
            }
        )
    return {"questions": len(items), "summary": summarise(rows), "per_question": rows}


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for when in ("before", "after"):
        for kind in ("all", "email", "note"):
            picked = [r[when] for r in rows if kind in ("all", r["kind"])]
            out[f"{when}_{kind}"] = {
                "questions": len(picked),
                "duplicate_pair_share": mean(float(p["duplicate_pair"]) for p in picked),
                "source@3": mean(float(p["source"]) for p in picked),
                "answer@3": mean(p["answer"] for p in picked),
                "full_slots_share": mean(float(len(p["chunks"]) == K) for p in picked),
            }
    out["changed"] = sum(r["before"]["chunks"] != r["after"]["chunks"] for r in rows)
    return out


# -- 2. the cosine bound ----------------------------------------------------------------------


def thread(record: ChunkRecord) -> str:
    return _PREFIX.sub("", record.title).strip().lower()


def document(record: ChunkRecord) -> str:
    return record.message_id or record.note_path


def cosine(vectors: Vectors, a: ChunkRecord, b: ChunkRecord) -> float:
    return float(vectors[a.chunk_id] @ vectors[b.chunk_id])


def distinct_pairs(records: list[ChunkRecord], vectors: Vectors) -> dict[str, list[float]]:
    """Cosines of pairs that are not duplicates: two mails of one thread, two chunks of one
    document, and each chunk with its nearest chunk of another document (the same topic)."""
    groups: dict[str, list[float]] = {"same thread": [], "same document": [], "nearest other": []}
    shapes = {r.chunk_id: shape(r.text) for r in records}
    for a, b in itertools.combinations(records, 2):
        if duplicates(shapes[a.chunk_id], shapes[b.chunk_id]):
            continue
        if document(a) == document(b):
            groups["same document"].append(cosine(vectors, a, b))
        elif a.kind == b.kind == "email" and thread(a) == thread(b):
            groups["same thread"].append(cosine(vectors, a, b))
    for a in records:
        others = [
            cosine(vectors, a, b)
            for b in records
            if document(b) != document(a) and not duplicates(shapes[a.chunk_id], shapes[b.chunk_id])
        ]
        groups["nearest other"].append(max(others))
    return groups


def corpus_duplicates(records: list[ChunkRecord], vectors: Vectors) -> list[dict[str, Any]]:
    """Chunk pairs of two stored documents that the text rules call duplicates: in the demo the
    list copy, the resent quote, the forward and the Outlook-style replies."""
    shapes = {r.chunk_id: shape(r.text) for r in records}
    return [
        {"a": a.chunk_id, "b": b.chunk_id, "cosine": cosine(vectors, a, b), "a_title": a.title}
        for a, b in itertools.combinations(records, 2)
        if (a.message_id, a.note_path, a.title) != (b.message_id, b.note_path, b.title)
        and duplicates(shapes[a.chunk_id], shapes[b.chunk_id])
    ]


VARIANTS: dict[str, Callable[[re.Match[str], str], str]] = {
    "list copy (subject tag)": lambda h, body: (
        f"From: {h['who']} | Date: {h['date']} | Subject: [Fernwood Team] {h['subject']}\n{body}"
    ),
    "resent (other date)": lambda h, body: (
        f"From: {h['who']} | Date: {h['date'][:8]}28 | Subject: {h['subject']}\n{body}"
    ),
    "quoted in a reply (> markers)": lambda h, body: (
        f"From: Maya Lindqvist | Date: {h['date']} | Subject: Re: {h['subject']}\n"
        + "\n".join("> " + line for line in body.splitlines())
    ),
}


def made_duplicates(ctx, records: list[ChunkRecord], vectors: Vectors) -> dict[str, list[float]]:
    """Cosine between every mail chunk and copies of it made here: a list copy, a resent copy,
    the chunk quoted with "> " in a reply."""
    mails = [(r, _HEADER.fullmatch(r.text.partition("\n")[0])) for r in records]
    mails = [(r, h) for r, h in mails if h]
    out = {}
    for name, make in VARIANTS.items():
        texts = [make(h, r.text.partition("\n")[2]) for r, h in mails]
        embedded = ctx.embedder.embed_batch(texts)
        out[name] = [
            float(vectors[r.chunk_id] @ e) for (r, _), e in zip(mails, embedded, strict=True)
        ]
    return out


def stats(values: Sequence[float], bound: float) -> dict[str, Any]:
    return {
        "pairs": len(values),
        "min": min(values),
        "p1": percentile(values, 1),
        "p5": percentile(values, 5),
        "median": percentile(values, 50),
        "p99": percentile(values, 99),
        "max": max(values),
        "share_at_or_above_bound": mean(float(v >= bound) for v in values),
    }


def bench_bound(ctx, bound: float) -> dict[str, Any]:
    records = ctx.store.chunk_records(ctx.store.chunk_texts()[0].tolist())
    vectors = ctx.retriever.vectors([r.chunk_id for r in records])
    apart = distinct_pairs(records, vectors)
    log("embedding the made duplicates")
    made = made_duplicates(ctx, records, vectors)
    corpus = corpus_duplicates(records, vectors)
    highest = max(max(v) for v in apart.values())
    return {
        "embedder": ctx.embedder.name,
        "configured_bound": bound,
        "suggested_bound": math.ceil((highest + MARGIN) * 100) / 100,
        "margin": MARGIN,
        "distinct": {name: stats(v, bound) for name, v in apart.items()},
        "duplicates": {name: stats(v, bound) for name, v in made.items()}
        | {"in the demo corpus": stats([p["cosine"] for p in corpus], bound)},
        "corpus_duplicate_pairs": corpus,
    }


# -- report -----------------------------------------------------------------------------------


def print_selection(selection: dict[str, Any]) -> None:
    s = selection["summary"]
    keys = ("duplicate_pair_share", "source@3", "answer@3", "full_slots_share")
    rows = [
        (
            f"{when} ({kind})",
            s[f"{when}_{kind}"]["questions"],
            *(s[f"{when}_{kind}"][k] for k in keys),
        )
        for kind in ("all", "email", "note")
        for when in ("before", "after")
    ]
    columns = ["selection", "questions", "dup pair in top-3", "source@3", "answer@3", "3 slots"]
    note = (
        f"Selection.candidates + rerank (reranker off), {K} chunks; before: duplicates = keep "
        "(the fused top 3), after: duplicates = merge. "
        f"{s['changed']} of {selection['questions']} selections changed. source@3: the QA item's "
        "message or note among the chunks; answer@3: every must_contain string in their text"
    )
    print_table("The prompt's chunks, demo QA", columns, rows, note)


def print_bound(bound: dict[str, Any]) -> None:
    keys = ("pairs", "min", "p1", "p5", "median", "p99", "max", "share_at_or_above_bound")
    rows = [(f"distinct: {n}", *(v[k] for k in keys)) for n, v in bound["distinct"].items()]
    rows += [(f"duplicate: {n}", *(v[k] for k in keys)) for n, v in bound["duplicates"].items()]
    columns = ["pairs", "n", "min", "p1", "p5", "median", "p99", "max", "≥ bound"]
    note = (
        f"{bound['embedder']}: bound {bound['configured_bound']} configured, "
        f"{bound['suggested_bound']} suggested (most similar distinct pair + {bound['margin']}, "
        "rounded up). Distinct pairs exclude those the text rules call duplicates"
    )
    print_table("Dense cosine: duplicates vs distinct chunks", columns, rows, note)


def main() -> None:
    args = parse_args()
    require_demo()
    with tempfile.TemporaryDirectory(prefix="bench-distinct-") as tmp:
        ctx = open_demo(Path(tmp), args.home)
        bound = COSINE_BOUNDS[ctx.embedder.name]
        log("selecting the prompt's chunks for every demo question")
        selection = bench_selection(ctx, load_qa(), bound)
        measured = bench_bound(ctx, bound)
    print_selection(selection)
    print_bound(measured)
    results = {"k": K, "selection": selection, "cosine_bound": measured}
    print(f"wrote {write_results(args.out, results, vars(args))}")


if __name__ == "__main__":
    main()
