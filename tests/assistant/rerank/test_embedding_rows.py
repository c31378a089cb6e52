"""The embedding-row LRU (weights.EmbeddingRows): one table, the right rows after evictions."""

from __future__ import annotations

import json

import numpy as np
import torch

from assistant.rerank.bert import BertFile
from assistant.rerank.weights import EmbeddingRows


def test_rows_come_back_right_through_evictions_and_past_capacity(tiny_cross):
    weights = BertFile(tiny_cross, json.loads((tiny_cross / "config.json").read_text()))
    full = torch.from_numpy(weights.read("word").astype(np.float32))
    rows = EmbeddingRows(weights, capacity=3, name="word")
    for tokens in ([5, 7, 5], [9, 11], [7, 5, 9], [1, 2, 3, 4, 2]):  # the last: 4 distinct > 3
        torch.testing.assert_close(rows(tokens), full[tokens], atol=0, rtol=0)
    assert rows.table.shape == (3, full.shape[1])  # never more rows than the capacity
    assert rows.hits == 1 and rows.misses == 6  # 7 hit once; 5 and 9 read again
    weights.close()
