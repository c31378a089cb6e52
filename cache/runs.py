"""The log of precompute runs (the `runs` table): when each started and ended, what it did and
why it stopped. A run killed mid-way keeps no end."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime

from sqlite_utils import Database

from cache.db import write


class RunLog:
    def __init__(self, db: Database) -> None:
        self.db = db

    def open(self) -> int:
        """Record a run's start; return its id."""
        return write(self.db, "INSERT INTO runs (started) VALUES (?)", [time.time()]).lastrowid

    def close(
        self, run_id: int, jobs: int, cpu_s: float, stopped: str, kinds: dict | None = None
    ) -> None:
        """Record a run's end: its jobs, CPU seconds, why it stopped, and jobs by kind."""
        write(
            self.db,
            "UPDATE runs SET finished = ?, jobs = ?, cpu_s = ?, stopped = ?, kinds = ? "
            "WHERE id = ?",
            [time.time(), jobs, cpu_s, stopped, json.dumps(kinds or {}), run_id],
        )

    def last(self) -> dict | None:
        """The last run that ended: when (ISO, UTC), its jobs, CPU seconds, why it stopped, its
        minutes and its jobs by kind (chunk_kv: nodes, populate/decode: answers)."""
        row = self.db.execute(
            "SELECT finished, jobs, cpu_s, stopped, started, kinds FROM runs "
            "WHERE finished IS NOT NULL "
            "ORDER BY id DESC LIMIT 1"
        ).fetchone()
        if row is None:
            return None
        when = datetime.fromtimestamp(row[0], UTC).isoformat(timespec="seconds")
        return {
            "finished": when, "jobs": row[1], "cpu_s": round(row[2], 1), "stopped": row[3],
            "minutes": round((row[0] - row[4]) / 60, 1), "by_kind": json.loads(row[5] or "{}"),
        }  # fmt: skip
