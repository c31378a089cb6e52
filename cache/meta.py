"""Named values of the cache database (the `cache_meta` table): how far the abstract has read,
which knowledge version the QA bank was last checked against."""

from __future__ import annotations

from sqlite_utils import Database

from cache.db import write


class CacheMeta:
    def __init__(self, db: Database) -> None:
        self.db = db

    def get(self, key: str, default: str) -> str:
        row = self.db.execute("SELECT value FROM cache_meta WHERE key = ?", [key]).fetchone()
        return row[0] if row else default

    def set(self, key: str, value: str) -> None:
        write(
            self.db,
            "INSERT INTO cache_meta VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [key, value],
        )
