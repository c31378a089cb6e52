"""Query prediction (PerCache §4.2): what the user is likely to ask next, from two sources.

- Knowledge-based: the knowledge abstract — people, topics, dates and events of the mail — holds
  one item list per chunk; detail questions are written from a chunk, general ones from the
  abstract's topics.
- History-based: the user's recent questions, whose style and interests new questions imitate.

The LLM writes the questions (the caller runs it); this module keeps the abstract and the history,
cleans what a small model writes, and drops questions the QA bank (or the batch) already has.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from sqlite_utils import Database

from cache.db import transaction, write
from cache.meta import CacheMeta
from cache.protocols import Embedder
from cache.qa_bank import QABank
from cache.room import unless_full

# A small model often writes about the text instead of from it; such questions are never asked.
_META = re.compile(
    r"\b(passage|the author|the context|the article|this text|the question|answer to)\b", re.I
)
_WH = re.compile(r"^(who|what|when|where|which|why|how|is|are|was|did|does|do|can)\b", re.I)


def clean_question(text: str) -> str | None:
    """The question in a line of model output, or None when it is not a usable question."""
    line = text.strip().lstrip("-*•0123456789.) ").strip().strip('"')
    words = line.split("?", 1)[0].split()
    line = " ".join(words)
    if not (3 <= len(words) <= 24) or not _WH.match(line) or _META.search(line):
        return None
    if len({w.lower() for w in words}) < len(words) * 0.6:  # a loop: "the the the"
        return None
    return f"{line}?"


def parse_questions(text: str) -> list[str]:
    """The usable questions in a block of model output, one per line, in order, no repeats."""
    seen: dict[str, str] = {}
    for line in text.splitlines():
        question = clean_question(line)
        if question and question.lower() not in seen:
            seen[question.lower()] = question
    return list(seen.values())


def drop_known(
    questions: Sequence[str], embedder: Embedder, bank: QABank, threshold: float
) -> list[tuple[str, np.ndarray]]:
    """Questions (with their vectors) not already in the QA bank nor repeated in the batch, where
    "already" means cosine ≥ `threshold` — the same test a QA-bank hit uses."""
    if not questions:
        return []
    vectors = embedder.embed_batch(list(questions))
    kept: list[tuple[str, np.ndarray]] = []
    for question, vector in zip(questions, vectors, strict=True):
        near = bank.nearest(vector, answered_only=False)
        if near is not None and near.similarity >= threshold:
            continue
        if any(float(vector @ other) >= threshold for _, other in kept):
            continue
        kept.append((question, vector))
    return kept


@dataclass(frozen=True)
class AbstractItem:
    chunk_id: int
    kind: str  # person | topic | date | event
    text: str


class KnowledgeAbstract:
    """The stored abstract: items merged across imports (one row per distinct kind+text, first
    chunk that mentioned it), and how far through the chunks it has read."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.meta = CacheMeta(db)

    def merge(self, items: Iterable[AbstractItem]) -> int:
        """Add items not yet in the abstract; return how many were new."""
        now = time.time()
        rows = [(i.chunk_id, i.kind, i.text, now) for i in items]
        with transaction(self.db):
            before = self.count()
            self.db.conn.executemany(
                "INSERT OR IGNORE INTO abstract_items (chunk_id, kind, text, created) "
                "VALUES (?,?,?,?)",
                rows,
            )
            return self.count() - before

    def count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM abstract_items").fetchone()[0])

    def items(self, kind: str | None = None, limit: int = 1000) -> list[AbstractItem]:
        where, params = ("WHERE kind = ?", [kind]) if kind else ("", [])
        rows = self.db.execute(
            f"SELECT chunk_id, kind, text FROM abstract_items {where} ORDER BY id DESC LIMIT ?",
            [*params, limit],
        ).fetchall()
        return [AbstractItem(*r) for r in rows]

    def read_upto(self) -> int:
        """The largest chunk id already read into the abstract."""
        return int(self.meta.get("abstract_upto", "0"))

    def mark_read(self, chunk_id: int) -> None:
        self.meta.set("abstract_upto", str(chunk_id))

    def render(self, limit: int = 40) -> str:
        """The abstract as short text lines, newest topics first (for a prediction prompt)."""
        lines = []
        for kind in ("topic", "event", "person"):
            names = [i.text for i in self.items(kind, limit)]
            if names:
                lines.append(f"{kind}s: " + "; ".join(names[: limit // 2]))
        return "\n".join(lines)


SAVINGS_DAYS = 7  # "the last nights": what the questions of this many days were saved


@dataclass(frozen=True)
class Savings:
    """Prompt tokens the KV tree restored, and the questions a predicted answer served (each
    worth `mean_prompt` tokens), over some days of questions."""

    kv_tokens: int
    predicted_hits: int
    mean_prompt: float

    @property
    def by_predictions(self) -> float:
        return self.predicted_hits * self.mean_prompt

    @property
    def predictions_first(self) -> bool:
        """The night's answered predictions saved more than its KV nodes: they go first."""
        return self.by_predictions > self.kv_tokens


class History:
    """The user's questions, newest last (history-based prediction reads the recent ones), each
    with the chunks its prompt was made from (precompute's access-ranked plan counts them)."""

    def __init__(self, db: Database, keep: int = 500) -> None:
        self.db = db
        self.keep = keep

    @unless_full("the question's history row")
    def add(self, question: str) -> int | None:
        """Record an asked question; return its row (to attach its chunks once retrieved)."""
        with transaction(self.db):
            row = self.db.execute(
                "INSERT INTO history (question, asked) VALUES (?, ?)", [question, time.time()]
            ).lastrowid
            self.db.execute(
                "DELETE FROM history WHERE id <= (SELECT max(id) FROM history) - ?", [self.keep]
            )
        return int(row)

    @unless_full("the chunks the question was answered from")
    def retrieved(self, row: int, chunk_ids: Sequence[int]) -> None:
        """The chunks the question of `row` was answered from (its prompt's, or its QA hit's)."""
        chunks = json.dumps([int(i) for i in chunk_ids])
        write(self.db, "UPDATE history SET chunks = ? WHERE id = ?", [chunks, row])

    @unless_full("what answering the question was saved")
    def saved(self, row: int, kv_tokens: int, prompt_tokens: int, served: str = "") -> None:
        """What answering the question of `row` was saved: `kv_tokens` of its `prompt_tokens`
        restored from the KV tree, or (`served`: the served entry's origin) the whole answer
        by a QA-bank hit."""
        write(
            self.db,
            "UPDATE history SET kv_tokens = ?, prompt_tokens = ?, served = ? WHERE id = ?",
            [int(kv_tokens), int(prompt_tokens), served, row],
        )

    def savings(self, since: float | None = None) -> Savings:
        """What the KV tree and the night's answered predictions saved the questions asked
        since `since` (epoch seconds; by default, SAVINGS_DAYS ago), in prompt tokens: a hit on
        a predicted answer saved a whole prompt, counted as the mean prompt of the questions
        the model answered."""
        if since is None:
            since = time.time() - SAVINGS_DAYS * 86400
        kv, prompts, answered, predicted = self.db.execute(
            "SELECT coalesce(sum(kv_tokens), 0), coalesce(sum(prompt_tokens), 0), "
            "coalesce(sum(served = '' AND prompt_tokens > 0), 0), "
            "coalesce(sum(served LIKE 'predicted%'), 0) FROM history WHERE asked >= ?",
            [since],
        ).fetchone()
        mean_prompt = prompts / answered if answered else 0.0
        return Savings(int(kv), int(predicted), mean_prompt)

    def chunk_counts(self) -> Counter[int]:
        """How many of the kept questions each chunk served."""
        counts: Counter[int] = Counter()
        for (chunks,) in self.db.execute("SELECT chunks FROM history").fetchall():
            counts.update(set(json.loads(chunks)))
        return counts

    def recent(self, n: int = 10) -> list[str]:
        rows = self.db.execute("SELECT question FROM history ORDER BY id DESC LIMIT ?", [n])
        return [r[0] for r in reversed(rows.fetchall())]

    def last_id(self) -> int:
        return int(self.db.execute("SELECT coalesce(max(id), 0) FROM history").fetchone()[0])
