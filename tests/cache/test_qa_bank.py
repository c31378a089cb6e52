from __future__ import annotations

import numpy as np
import pytest

from cache.db import open_cache_db
from cache.qa_bank import QABank


def unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture
def bank():
    return QABank(open_cache_db(None), threshold=0.9, budget_bytes=10_000)


def test_hit_above_threshold_only(bank):
    bank.add("when does the kitchen work start", unit(1, 0, 0), "On 2 March.")
    hit = bank.lookup(unit(1, 0.2, 0))  # cosine 0.98
    assert hit is not None and hit.entry.answer == "On 2 March." and hit.similarity > 0.9
    assert bank.lookup(unit(1, 1, 0)) is None  # cosine 0.71
    assert bank.get(hit.entry.id).hits == 1


def test_pending_and_stale_entries_are_not_served(bank):
    pending = bank.add("what is the booking code", unit(0, 1, 0), None, origin="predicted")
    assert bank.lookup(unit(0, 1, 0)) is None
    bank.set_answer(pending, "XK7Q2P", ["12"], version=3)
    assert bank.lookup(unit(0, 1, 0)).entry.answer == "XK7Q2P"
    bank.mark_stale([pending])
    assert bank.lookup(unit(0, 1, 0)) is None
    assert bank.stats()["stale"] == 1


def test_lfu_eviction_keeps_the_budget():
    bank = QABank(
        open_cache_db(None), threshold=0.9, budget_bytes=3 * 420
    )  # an entry: 2 + 12 + 400 bytes
    ids = [bank.add(f"q{i}", unit(i + 1, 1, 0.5), "a" * 400) for i in range(3)]
    bank.lookup(unit(1, 1, 0.5))
    bank.lookup(unit(1, 1, 0.5))
    bank.add("q3", unit(0, 0, 1), "a" * 400)
    assert bank.used_bytes() <= 3 * 420
    left = {e.question for e in bank.entries()}
    assert "q0" in left and "q3" in left and len(left) < 4
    assert ids[0] in {e.id for e in bank.entries()}


def test_new_entries_are_visible_to_lookup_at_once(bank):
    assert bank.lookup(unit(0, 0, 1)) is None
    bank.add("x", unit(0, 0, 1), "yes")
    assert bank.lookup(unit(0, 0, 1)).entry.answer == "yes"
