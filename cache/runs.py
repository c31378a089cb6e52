"""The log of precompute runs (the `runs` table): when each started and ended, what it did and
why it stopped. A run killed mid-way keeps no end."""

from __future__ import annotations

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

    def close(self, run_id: int, jobs: int, cpu_s: float, stopped: str) -> None:
        write(
            self.db,
            "UPDATE runs SET finished = ?, jobs = ?, cpu_s = ?, stopped = ? WHERE id = ?",
            [time.time(), jobs, cpu_s, stopped, run_id],
        )

    def last(self) -> dict | None:
        """The last run that ended: when (ISO, UTC), its jobs, CPU seconds and why it stopped."""
        row = self.db.execute(
            "SELECT finished, jobs, cpu_s, stopped FROM runs WHERE finished IS NOT NULL "
            "ORDER BY id DESC LIMIT 1"
        ).fetchone()
        if row is None:
            return None
        when = datetime.fromtimestamp(row[0], UTC).isoformat(timespec="seconds")
        return {"finished": when, "jobs": row[1], "cpu_s": round(row[2], 1), "stopped": row[3]}
