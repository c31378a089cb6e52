from __future__ import annotations

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from assistant.home import FILE_MODE, replace_atomically
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


def test_an_index_saved_while_another_writer_clears_the_old_files_still_lands(tmp_path):
    """An import, a night and a question may build the same index at once: each clears the
    older files of its kind ("bm25-TAG-*.npz") before saving. A writer's temporary file is its
    own and outside that pattern, so the other's clearing never takes it from under it."""
    index = BM25Index.build(np.array([1, 2]), ["kitchen tiles arrive", "the wedding speech"])
    path = tmp_path / "bm25-tag-okapi-3.npz"

    def write_while_another_clears(tmp):
        np.savez(tmp, ids=index.ids)
        for old in tmp_path.glob("bm25-tag-okapi-*.npz"):  # the other writer, meanwhile
            old.unlink(missing_ok=True)

    replace_atomically(path, write_while_another_clears, ".npz")
    assert path.exists() and list(tmp_path.iterdir()) == [path]
    index.save(path)
    assert list(BM25Index.load(path).ids) == [1, 2]
    assert oct(path.stat().st_mode & 0o777) == oct(FILE_MODE)
