"""A cache database with no room to grow: SQLite's "database or disk is full" (SQLITE_FULL),
which the disk (or the user's quota) filling up raises from any write; what the user is told then
(which file, and what to do); and the writes a user's question skips then rather than fail.

A question's writes to the cache keep something for later (its history row, its QA entry, its
KV, counters): none of them is needed to answer it. Inside `asking()` (Answerer.answer), a method
marked `unless_full` that finds no room stores nothing, says so in the log and returns its
`default`: the answer is shown all the same (the log says where and what to do, once a
question). Anywhere else (the night) it raises, and the night stops on it with the job put back
in the queue (precompute/runner.py)."""

from __future__ import annotations

import functools
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from sqlite_utils import Database

from cache.db import file_of

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])
_question = threading.local()  # .asking: this thread runs a user's question


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


@contextmanager
def asking() -> Iterator[None]:
    """A user's question runs inside: its cache writes that find no room are skipped."""
    before = getattr(_question, "asking", False)
    _question.asking, _question.said = True, False
    try:
        yield
    finally:
        _question.asking = before


def unless_full(
    what: str, default: Any = None, db: Callable[[Any], Database] = lambda self: self.db
) -> Callable[[F], F]:
    """Mark a method that writes `what` to the cache database (`db(self)`: its `db` unless
    said otherwise) and is called in no transaction of its caller's: in a user's question, when
    the database has no room, it stores nothing (its own transaction rolled back), logs so, and
    returns `default`."""

    def mark(method: F) -> F:
        @functools.wraps(method)
        def written(self, *args, **kwargs):
            try:
                return method(self, *args, **kwargs)
            except sqlite3.OperationalError as exc:
                if not (full(exc) and getattr(_question, "asking", False)):
                    raise
                if _question.said:  # where, and what to do: once a question
                    log.info("%s not kept either: no room", what)
                else:
                    log.warning("%s not kept: %s", what, no_room(db(self), exc))
                _question.said = True
                return default

        return written  # type: ignore[return-value]

    return mark
