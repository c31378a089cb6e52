"""The reader model's verdicts that a repeat should not pay for again (the `verdicts` table):
one margin per key, the key naming the model and what it was asked (answer/judge.py's "same
question" of a stored and a new question). A new model's keys differ, so its verdicts are its
own; an entry nobody asks again costs a few dozen bytes."""

from __future__ import annotations

from sqlite_utils import Database

from cache.db import write
from cache.room import unless_full


class Verdicts:
    def __init__(self, db: Database) -> None:
        self.db = db

    def get(self, key: str) -> float | None:
        row = self.db.execute("SELECT margin FROM verdicts WHERE key = ?", [key]).fetchone()
        return float(row[0]) if row else None

    @unless_full("the reader's verdict")
    def put(self, key: str, margin: float) -> None:
        write(
            self.db,
            "INSERT INTO verdicts VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET margin = excluded.margin",
            [key, margin],
        )
