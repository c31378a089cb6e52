"""Checks shared by the robustness tests: is a database intact, does every KV blob verify."""

from __future__ import annotations

import hashlib
import sqlite3
from contextlib import closing
from pathlib import Path


def read_one(path: Path, sql: str, params: tuple = ()) -> int | None:
    """One value from a database that another process may be writing; None while the file or
    its tables are not there yet."""
    if not path.exists():
        return None
    try:
        with closing(sqlite3.connect(path, timeout=5)) as conn:
            return conn.execute(sql, params).fetchone()[0]
    except sqlite3.OperationalError:
        return None


def integrity(path: Path) -> list[str]:
    """`PRAGMA integrity_check` and `foreign_key_check` findings (empty: intact)."""
    with closing(sqlite3.connect(path)) as conn:
        found = [r[0] for r in conn.execute("PRAGMA integrity_check") if r[0] != "ok"]
        return found + [repr(r) for r in conn.execute("PRAGMA foreign_key_check")]


def blob_problems(cache: sqlite3.Connection, kv_root: Path) -> list[str]:
    """Every KV blob row whose file is missing or does not match its size and sha256, and every
    tree node that points at a blob with no row (empty: every blob verifies)."""
    rows = cache.execute("SELECT key, size, sha256 FROM blobs").fetchall()
    dangling = cache.execute(
        "SELECT blob_key FROM kv_nodes WHERE blob_key IS NOT NULL "
        "AND blob_key NOT IN (SELECT key FROM blobs)"
    ).fetchall()
    problems = [f"node points at missing blob {k}" for (k,) in dangling]
    for key, size, digest in rows:
        path = kv_root / key[:2] / f"{key}.bin"
        data = path.read_bytes() if path.exists() else None
        if data is None or len(data) != size or hashlib.sha256(data).hexdigest() != digest:
            problems.append(f"{path} does not verify")
    return problems
