"""The KV budget sized to the machine (cache/budget.py), and a changed budget keeps the QA bank."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from assistant.services import open_services
from cache.budget import CAP, FLOOR, GIB, disk_budget, held_bytes, kv_budget
from cache.kv_tree import KIND
from cache.qa_bank import QABank


def test_a_tenth_of_the_free_disk_within_the_floor_and_the_cap():
    assert disk_budget(70 * GIB) == 7 * GIB
    assert disk_budget(8 * GIB) == FLOOR  # a tenth is under the floor
    assert disk_budget(1000 * GIB) == CAP
    assert disk_budget(3 * GIB) == int(1.5 * GIB)  # never more than half of what is free


def test_a_budget_the_user_set_wins(tmp_path):
    assert kv_budget(512, tmp_path) == 512 * 2**20
    assert FLOOR // 2 <= kv_budget(0, tmp_path) <= CAP


def test_a_home_opened_with_no_budget_set_sizes_it_from_the_disk(tmp_path):
    ctx = open_services(tmp_path / "home")
    assert ctx.kv_budget_auto
    now = kv_budget(0, ctx.home.cache_dir)  # the free disk moves a little meanwhile
    assert abs(ctx.settings.cache.kv_budget_bytes - now) <= 0.01 * now


def test_a_smaller_budget_evicts_kv_and_keeps_the_qa_bank(tmp_path):
    ctx = open_services(tmp_path / "home")
    qa = QABank(ctx.cache_db, 0.95, 2**20)
    entry = qa.add("When is the board meeting?", np.ones(8, np.float32), "On Monday.")
    for i in range(4):
        ctx.blobs.put(KIND, f"{i:040x}", bytes(1000))
    ctx.settings.cache.kv_budget_mb = 2500 / 2**20  # room for two of the four blobs
    smaller = open_services(tmp_path / "home", ctx.settings)
    smaller.blobs.put(KIND, f"{9:040x}", bytes(1000))
    assert smaller.blobs.used(KIND) <= 2500
    kept = QABank(smaller.cache_db, 0.95, 2**20)
    assert kept.get(entry) is not None and kept.get(entry).answer == "On Monday."


def test_what_the_kv_cache_holds_counts_as_room_so_the_budget_keeps_after_a_night(
    tmp_path, monkeypatch
):
    """Sized from the free disk alone, the budget shrank after each night that filled it (the
    night's nodes are no longer free disk) and the next start evicted them: on a nearly full
    disk, night after night, down to about a third. The KV blobs stored count as free."""
    ctx = open_services(tmp_path / "home")
    for i in range(3):
        ctx.blobs.put(KIND, f"{i:040x}", bytes(1000))
    assert held_bytes(ctx.home.cache_dir / "qa.db") == 3000
    assert held_bytes(ctx.home.cache_dir / "qa.db", "other") == 0
    assert held_bytes(tmp_path / "none.db") == 0
    # a night filled a 4 GiB budget out of 44 GiB free: 40 GiB are free now
    ctx.cache_db.execute("UPDATE blobs SET size = ?", [4 * GIB // 3])
    ctx.cache_db.conn.commit()
    disk = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(shutil, "disk_usage", lambda _: disk._replace(free=40 * GIB))
    reopened = open_services(tmp_path / "home")
    assert reopened.settings.cache.kv_budget_bytes == pytest.approx(disk_budget(44 * GIB), abs=8)
    assert kv_budget(0, tmp_path) == disk_budget(40 * GIB)  # the disk alone: 4 GiB, not 4.4
