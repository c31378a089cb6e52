from __future__ import annotations

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from assistant.knowledge.bm25 import BM25Index, tokenize


@pytest.fixture
def corpus() -> list[str]:
    rng = np.random.default_rng(7)
    words = "kitchen tiles battery radio lora wedding uppsala budget quote sensor drift".split()
    return [" ".join(rng.choice(words, size=rng.integers(3, 30))) for _ in range(200)]


def test_scores_equal_rank_bm25(corpus):
    index = BM25Index.build(np.arange(len(corpus)), corpus)
    okapi = BM25Okapi([tokenize(t) for t in corpus])
    for query in ["kitchen tiles", "battery battery drift", "wedding in uppsala", "absent"]:
        np.testing.assert_allclose(
            index.scores(query), okapi.get_scores(tokenize(query)), rtol=1e-5, atol=1e-6
        )


def test_save_load_roundtrip(tmp_path, corpus):
    index = BM25Index.build(np.arange(100, 100 + len(corpus)), corpus)
    index.save(tmp_path / "bm25.npz")
    loaded = BM25Index.load(tmp_path / "bm25.npz")
    assert loaded.ids.tolist() == index.ids.tolist()
    np.testing.assert_array_equal(loaded.scores("radio sensor"), index.scores("radio sensor"))
    assert (tmp_path / "bm25.npz").stat().st_mode & 0o777 == 0o600


def test_empty_corpus_scores_nothing():
    index = BM25Index.build(np.arange(2), ["", "the a of"])
    assert index.scores("anything").tolist() == [0.0, 0.0]
