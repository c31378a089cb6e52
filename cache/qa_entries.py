"""What the QA bank stores and hands out: an entry (a question, its answer or none yet, the
chunks and lines it was made from), a hit (an entry and its similarity to the asked question),
a served hit and the log of them (for the night's self-check), and the row ↔ entry conversions
of qa_entries.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlite_utils import Database

from cache.db import write
from cache.room import unless_full


@dataclass(frozen=True)
class QAEntry:
    id: int
    question: str
    answer: str | None
    sources: list[str]
    knowledge_version: int
    stale: bool
    origin: str
    hits: int
    chunk_watermark: int = 0  # the newest chunk id when it was answered
    refused_at: float = 0.0  # served only above this similarity (0: never refused)
    # the lines the answer quoted, (chunk id, line) in order; empty: a question-only entry
    evidence: tuple[tuple[int, str], ...] = ()
    answered_at: float | None = None  # when the answer was made (time.time())
    # the reader confirmed its quote: when it was kept, or when a reader first served it (an
    # answer kept with no reader, or the night's, is judged when first served: answerer.py)
    judged: bool = False

    @property
    def chunk_ids(self) -> list[int]:
        """The knowledge-bank chunks the answer was made from, in prompt order."""
        return chunk_ids_of(self.sources)


def chunk_ids_of(sources: Sequence) -> list[int]:
    """The chunk ids among an entry's sources (the rest name other things)."""
    return [int(i) for i in sources if str(i).isdigit()]


def using(entries: Iterable[QAEntry], chunk_ids: Iterable[int]) -> list[int]:
    """The ids of the entries made from, or quoting, one of `chunk_ids`."""
    wanted = {int(i) for i in chunk_ids}
    quoted = [(e, [*e.chunk_ids, *(c for c, _ in e.evidence)]) for e in entries]
    return [e.id for e, ids in quoted if not wanted.isdisjoint(ids)]


@dataclass(frozen=True)
class QAHit:
    entry: QAEntry
    similarity: float


COLUMNS = (
    "id, question, answer, sources, knowledge_version, stale, origin, hits, chunk_watermark, "
    "refused_at, evidence, answered_at, judged"
)


def entry_of(row: Sequence) -> QAEntry:
    sources = json.loads(row[3])
    evidence = tuple((int(c), str(line)) for c, line in json.loads(row[10] or "[]"))
    return QAEntry(row[0], row[1], row[2], sources, row[4], bool(row[5]), *row[6:10], evidence,
                   row[11], bool(row[12]))  # fmt: skip


@dataclass(frozen=True)
class Served:
    """A hit the bank served: which entry, to which question, how similar."""

    id: int
    entry_id: int
    question: str
    similarity: float


class ServedLog:
    """The QA bank's log of the hits it served (`qa_served`), which the night's self-check
    samples and answers afresh (QABank is one)."""

    db: Database

    @unless_full("a served QA hit")
    def log_served(self, entry_id: int, question: str, similarity: float) -> None:
        """Remember that `entry_id` was served to `question`."""
        write(
            self.db,
            "INSERT INTO qa_served (entry_id, question, similarity, served) VALUES (?,?,?,?)",
            [entry_id, question, similarity, time.time()],
        )

    def unchecked(self, limit: int) -> list[Served]:
        """Served hits the self-check has not answered afresh yet, newest first."""
        rows = self.db.execute(
            "SELECT id, entry_id, question, similarity FROM qa_served WHERE checked IS NULL "
            "ORDER BY served DESC, id DESC LIMIT ?",
            [limit],
        )
        return [Served(*r) for r in rows.fetchall()]

    def checked(self, served_id: int) -> None:
        write(self.db, "UPDATE qa_served SET checked = ? WHERE id = ?", [time.time(), served_id])


def evidence_json(lines: Sequence[tuple[int, str]]) -> str:
    return json.dumps([[int(c), str(line)] for c, line in lines], ensure_ascii=False)


def entry_size(question: str, answer: str | None, blob: bytes) -> int:
    return len(question.encode()) + len(blob) + len((answer or "").encode())
