"""The precompute job queue, persisted in the cache database.

A job is named by a key, so planning the same work twice queues it once, and work already done is
not queued again. A job is claimed (state 'running') before it runs and marked 'done' in the same
transaction that nothing else depends on; a process killed mid-job leaves it 'running', and the
next run puts it back in the queue (`recover`), so nothing finished is redone and nothing started
is lost; unless its process ended each time it was tried: then it is failed, not tried again.
A job left 'running' by a run that ended (it could not put the job back: the disk full) is put
back uncounted, as `release` would have.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from cache.db import transaction, write

QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
ENDED = "its process ended while it ran, each time it was tried (killed, or crashed by it)"
RELEASE = "UPDATE jobs SET state = 'queued', attempts = max(attempts - 1, 0)"  # the try uncounted


@dataclass(frozen=True)
class Job:
    id: int
    kind: str
    key: str
    payload: dict[str, Any]
    priority: int
    attempts: int


class JobQueue:
    def __init__(self, db: Database, max_attempts: int = 2) -> None:
        self.db = db
        self.max_attempts = max_attempts

    def enqueue(self, kind: str, key: str, payload: dict | None = None, priority: int = 50) -> bool:
        """Queue `key` unless it is queued, running or done already; True if it was queued.
        A failed job is queued again (with its attempts kept)."""
        cur = write(
            self.db,
            "INSERT INTO jobs (kind, key, payload, priority, state, created) VALUES (?,?,?,?,?,?) "
            "ON CONFLICT(key) DO UPDATE SET state = 'queued', payload = excluded.payload "
            "WHERE jobs.state = 'failed' AND jobs.attempts < ?",
            [
                kind,
                key,
                json.dumps(payload or {}),
                priority,
                QUEUED,
                time.time(),
                self.max_attempts,
            ],
        )
        return cur.rowcount > 0

    def requeue(self, key: str, payload: dict | None = None) -> None:
        """Queue `key` again even if done (the work it did is out of date)."""
        write(
            self.db,
            "UPDATE jobs SET state = 'queued', attempts = 0, payload = coalesce(?, payload) "
            "WHERE key = ? AND state != 'running'",
            [json.dumps(payload) if payload is not None else None, key],
        )

    def claim(self, kinds: tuple[str, ...] | None = None) -> Job | None:
        """Take the next queued job (lowest priority number, then oldest) and mark it running."""
        where = f"AND kind IN ({','.join('?' * len(kinds))})" if kinds else ""
        with transaction(self.db):
            row = self.db.execute(
                "SELECT id, kind, key, payload, priority, attempts FROM jobs "
                f"WHERE state = 'queued' {where} ORDER BY priority, id LIMIT 1",
                list(kinds or ()),
            ).fetchone()
            if row is None:
                return None
            self.db.execute(
                "UPDATE jobs SET state = 'running', started = ?, attempts = attempts + 1 "
                "WHERE id = ?",
                [time.time(), row[0]],
            )
        return Job(row[0], row[1], row[2], json.loads(row[3]), row[4], row[5] + 1)

    def finish(self, job: Job, cpu_s: float) -> None:
        write(
            self.db,
            "UPDATE jobs SET state = 'done', finished = ?, cpu_s = ?, error = NULL WHERE id = ?",
            [time.time(), cpu_s, job.id],
        )

    def fail(self, job: Job, error: str) -> None:
        write(
            self.db,
            "UPDATE jobs SET state = 'failed', finished = ?, error = ? WHERE id = ?",
            [time.time(), error[:500], job.id],
        )

    def release(self, job: Job) -> None:
        """Put a job that was interrupted (not failed) back in the queue, uncounted."""
        write(self.db, f"{RELEASE} WHERE id = ?", [job.id])

    def recover(self, ended: bool = False) -> list[str]:
        """Jobs left 'running' go back to the queue. With `ended`, the run before ended rather
        than was killed: it left them running because it could not write them back (the disk
        full), and they go back uncounted, as `release` would have put them. Else, by a killed
        process: one that was running each of the last `max_attempts` times its process ended
        (the job may be what ends it: a crash in the model, the memory it takes) is failed
        instead, so that the runs after it go on; returns the keys of those."""
        if ended:
            write(self.db, f"{RELEASE} WHERE state = 'running'")
            return []
        with transaction(self.db):
            given_up = [
                row[0]
                for row in self.db.execute(
                    "SELECT key FROM jobs WHERE state = 'running' AND attempts >= ?",
                    [self.max_attempts],
                )
            ]
            self.db.execute(
                "UPDATE jobs SET state = 'failed', finished = ?, error = ? "
                "WHERE state = 'running' AND attempts >= ?",
                [time.time(), ENDED, self.max_attempts],
            )
            self.db.execute("UPDATE jobs SET state = 'queued' WHERE state = 'running'")
        return given_up

    def state_of(self, key: str) -> str | None:
        row = self.db.execute("SELECT state FROM jobs WHERE key = ?", [key]).fetchone()
        return row[0] if row else None

    def keys(self, kind: str, state: str | None = None) -> list[str]:
        """The keys of every job of `kind` in `state` (None: whatever its state)."""
        if state is None:
            rows = self.db.execute("SELECT key FROM jobs WHERE kind = ?", [kind]).fetchall()
        else:
            sql = "SELECT key FROM jobs WHERE kind = ? AND state = ?"
            rows = self.db.execute(sql, [kind, state]).fetchall()
        return [r[0] for r in rows]

    def pending(self) -> int:
        return int(
            self.db.execute(
                "SELECT count(*) FROM jobs WHERE state IN ('queued','running')"
            ).fetchone()[0]
        )

    def counts(self) -> dict[str, int]:
        rows = self.db.execute("SELECT state, count(*) FROM jobs GROUP BY state").fetchall()
        found = dict(rows)
        return {state: int(found.get(state, 0)) for state in (QUEUED, RUNNING, DONE, FAILED)}

    def counts_by_kind(self, state: str = DONE) -> dict[str, int]:
        rows = self.db.execute(
            "SELECT kind, count(*) FROM jobs WHERE state = ? GROUP BY kind", [state]
        ).fetchall()
        return dict(rows)
