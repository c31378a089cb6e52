"""A cache database with no room to grow: SQLite's "database or disk is full" (SQLITE_FULL),
which the disk (or the user's quota) filling up raises from any write, and what the user is told
then: which file, and what to do."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sqlite_utils import Database

from cache.db import file_of


def full(exc: BaseException) -> bool:
    """`exc` is SQLite finding no room for a write (the database's file or its journal)."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    return code == sqlite3.SQLITE_FULL or "database or disk is full" in str(exc)


def no_room(db: Database, exc: BaseException) -> str:
    """What the user must do before `db` can keep anything more: where, and how."""
    path = file_of(db.conn)
    if not path:
        return f"the cache database (in memory) is full ({exc})"
    return (
        f"no space left on the disk for the cache database {path} ({exc}): free some space "
        f"in {Path(path).parent}, or set a smaller [cache] kv_budget_mb"
    )
