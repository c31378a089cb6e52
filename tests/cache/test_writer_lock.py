"""The writer lock of a database file: one per file and process, re-entrant, held by every write
transaction; and a write that waits out another thread's unfinished read."""

from __future__ import annotations

import sqlite3
import threading
import time
from contextlib import closing

import pytest

from cache.db import open_cache_db, transaction, write, writer_lock


def test_one_lock_per_file_and_one_per_memory_database(tmp_path):
    a, b = open_cache_db(tmp_path / "qa.db"), open_cache_db(tmp_path / "qa.db")
    assert writer_lock(a) is writer_lock(b)
    assert writer_lock(a) is not writer_lock(open_cache_db(tmp_path / "other.db"))
    assert writer_lock(open_cache_db(None)) is not writer_lock(open_cache_db(None))


def test_nested_transactions_on_one_thread_are_savepoints(tmp_path):
    db = open_cache_db(tmp_path / "qa.db")
    with transaction(db):
        write(db, "INSERT INTO cache_meta VALUES ('outer', '1')")
        with pytest.raises(RuntimeError), transaction(db):
            write(db, "INSERT INTO cache_meta VALUES ('inner', '1')")
            raise RuntimeError("the inner part fails")
        with transaction(db):
            write(db, "INSERT INTO cache_meta VALUES ('second', '1')")
    keys = {k for (k,) in db.execute("SELECT key FROM cache_meta").fetchall()}
    assert keys == {"outer", "second"}


def test_another_threads_write_waits_for_the_open_transaction(tmp_path):
    db = open_cache_db(tmp_path / "qa.db")
    order: list[str] = []
    began = threading.Event()

    def other() -> None:
        began.wait()
        write(db, "INSERT INTO cache_meta VALUES ('other', '1')")
        order.append("other wrote")

    thread = threading.Thread(target=other)
    thread.start()
    with transaction(db):
        began.set()
        write(db, "INSERT INTO cache_meta VALUES ('mine', '1')")
        time.sleep(0.2)  # the other thread's statement would land in this transaction
        order.append("committed")
    thread.join(5)
    assert order == ["committed", "other wrote"]


def test_a_write_waits_out_another_threads_unfinished_read(tmp_path):
    """SQLite answers "database is locked" at once, without the busy timeout, when the shared
    connection holds a read snapshot (another thread's SELECT, not yet reset) and another
    process holds the write lock."""
    path = tmp_path / "qa.db"
    db = open_cache_db(path)
    for i in range(3):
        write(db, "INSERT INTO cache_meta VALUES (?, '1')", [f"k{i}"])
    reading = threading.Event()

    def read_slowly() -> None:
        cursor = db.conn.execute("SELECT key FROM cache_meta")
        cursor.fetchone()
        reading.set()
        time.sleep(0.3)
        cursor.close()

    with closing(sqlite3.connect(path, isolation_level=None, check_same_thread=False)) as other:
        reader = threading.Thread(target=read_slowly)
        reader.start()
        reading.wait(5)
        other.execute("BEGIN IMMEDIATE")
        other.execute("INSERT INTO cache_meta VALUES ('other', '1')")
        threading.Timer(0.5, lambda: other.execute("COMMIT")).start()
        write(db, "INSERT INTO cache_meta VALUES ('mine', '1')")
        reader.join(5)
    assert db.execute("SELECT count(*) FROM cache_meta").fetchone()[0] == 5
