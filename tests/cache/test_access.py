"""Which chunks get KV nodes first: the access skew of past and predicted questions, recorded in
the history and the QA bank, ranked by cache/policy.py."""

from __future__ import annotations

import numpy as np

from cache.db import open_cache_db
from cache.policy import access_order
from cache.prediction import History
from cache.qa_bank import QABank


def test_the_often_retrieved_chunk_comes_first_then_the_rest_newest_first():
    newest_first = [9, 8, 7, 6, 5, 4, 3, 2, 1]
    asked = {3: 4, 7: 1, 5: 1}
    order = list(access_order(newest_first, asked, {}, 0.5))
    assert order[:3] == [3, 7, 5]  # most used first; equal use: the newer first
    assert order[3:] == [9, 8, 6, 4, 2, 1]
    assert sorted(order) == sorted(newest_first)


def test_a_predicted_question_counts_its_weight_of_an_asked_one():
    newest_first = [4, 3, 2, 1]
    order = list(access_order(newest_first, {1: 1}, {2: 3, 3: 1}, 0.5))
    assert order == [2, 1, 3, 4]  # 1.5 > 1.0 > 0.5; 4 was never used
    assert list(access_order(newest_first, {1: 1}, {2: 3}, 0.0))[:2] == [1, 4]


def test_a_deleted_chunk_is_left_out():
    assert list(access_order([2, 1], {7: 5, 1: 1}, {}, 0.5)) == [1, 2]


def test_the_history_records_the_chunks_each_question_was_answered_from():
    history = History(open_cache_db(None), keep=2)
    first = history.add("When does the kitchen work start?")
    history.retrieved(first, [3, 1])
    second = history.add("Which tiles?")
    history.retrieved(second, [3, 2, 3])  # a chunk counts once per question
    assert history.chunk_counts() == {3: 2, 1: 1, 2: 1}
    history.add("Who gives the speech?")  # only `keep` questions are kept
    assert history.chunk_counts() == {3: 1, 2: 1}
    assert history.recent(5) == ["Which tiles?", "Who gives the speech?"]


def test_the_qa_bank_counts_the_chunks_of_predicted_entries_only():
    bank = QABank(open_cache_db(None), threshold=0.9, budget_bytes=100_000)
    vectors = np.eye(3, dtype=np.float32)
    bank.add("a?", vectors[0], None, ["4", "5"], origin="predicted:detail")
    bank.add("b?", vectors[1], "yes", ["5"], origin="predicted:history")
    bank.add("c?", vectors[2], "no", ["6"], origin="user")
    assert bank.chunk_uses("predicted") == {5: 2, 4: 1}
    assert bank.chunk_uses("user") == {6: 1}


def test_the_history_weighs_what_kv_nodes_and_answered_predictions_saved():
    """A question the model answered saved the prompt tokens restored from the KV tree; one a
    predicted answer served saved a whole prompt, counted as the mean prompt of the answered
    ones. Only questions asked since `since` count; a user's own stored answer is no
    prediction's."""
    history = History(open_cache_db(None))
    old = history.add("Asked last month")
    history.saved(old, 900, 1000)
    history.db.execute("UPDATE history SET asked = 0 WHERE id = ?", [old])
    answered = history.add("When does the kitchen work start?")
    history.saved(answered, 300, 600)
    again = history.add("When does the tile work start?")
    history.saved(again, 100, 400)
    mine = history.add("Which tiles?")
    history.saved(mine, 0, 0, "user")
    saved = history.savings(since=1.0)
    assert (saved.kv_tokens, saved.predicted_hits, saved.mean_prompt) == (400, 0, 500.0)
    assert not saved.predictions_first
    for _ in range(2):
        history.saved(history.add("When do the tiles come?"), 0, 0, "predicted:detail")
    saved = history.savings(since=1.0)
    assert saved.predicted_hits == 2 and saved.by_predictions == 1000.0
    assert saved.predictions_first  # 1,000 prompt tokens against 400
    assert History(open_cache_db(None)).savings(0.0).predictions_first is False  # no questions
