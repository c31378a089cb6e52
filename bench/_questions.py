"""A question set as the answer benches read it: data/qa/*.jsonl rows, every n-th to `limit`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from _common import _jsonl


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    answer: str
    must_contain: tuple[str, ...]
    source: str


def load(paths: list[Path], limit: int) -> list[Question]:
    rows = [r for path in paths for r in _jsonl(path)]
    qs = [
        Question(
            r.get("id", str(i)),
            r["question"],
            r.get("answer", ""),
            tuple(r.get("must_contain", ())),
            r.get("source", ""),
        )
        for i, r in enumerate(rows)
    ]
    if limit and limit < len(qs):
        step = len(qs) / limit
        qs = [qs[int(i * step)] for i in range(limit)]
    return qs
