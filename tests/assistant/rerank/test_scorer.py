"""Query likelihood on the real SmolLM2 (llama.cpp): document KV reuse gives the same scores,
and a corrupt or unloadable cached document KV is recomputed."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from assistant.llm.model_file import default_llm_model
from assistant.llm.runtime import LocalLLM
from assistant.rerank.doc_kv import KIND, DocKV
from assistant.rerank.prompt import PROMPTS
from assistant.rerank.scorer import QLScorer
from cache.blobs import BlobStore
from cache.db import open_cache_db

pytestmark = pytest.mark.slow
QUERY = "when does the kitchen renovation start"
PASSAGES = [
    "The kitchen renovation starts on Monday 4 May; the builders arrive at eight.",
    "Bananas are a good source of potassium and grow in the tropics.",
    "Our team meeting moved to Thursday afternoon in room 3.",
]


@pytest.fixture(scope="module")
def llm() -> LocalLLM:
    return LocalLLM(default_llm_model(), n_ctx=1024, n_threads=1)


@pytest.fixture
def scorer(llm, tmp_path) -> QLScorer:
    blobs = BlobStore(open_cache_db(None), tmp_path / "kv", {KIND: 1 << 30})
    return QLScorer(llm, PROMPTS["upr"], DocKV(blobs, llm.fingerprint))


def test_the_relevant_passage_ranks_first(scorer):
    scores = scorer.scores(QUERY, PASSAGES, use_doc_kv=False)
    assert int(np.argmax(scores)) == 0


def test_document_kv_reuse_gives_the_same_scores(scorer):
    plain = scorer.scores(QUERY, PASSAGES, use_doc_kv=False)
    first = scorer.scores(QUERY, PASSAGES)  # computes and stores each passage's KV
    assert scorer.doc_kv.blobs.count(KIND) == len(PASSAGES)
    again = scorer.scores(QUERY, PASSAGES)  # restores them
    np.testing.assert_allclose(first, plain, atol=1e-5)
    np.testing.assert_allclose(again, plain, atol=1e-5)


def test_precompute_fills_only_what_is_missing(scorer):
    assert scorer.precompute(PASSAGES[:2]) == 2
    assert scorer.precompute(PASSAGES) == 1
    assert scorer.precompute(PASSAGES, should_stop=lambda: True) == 0


def test_a_check_that_raises_stops_scoring_between_passages(scorer):
    calls = []

    def check():
        calls.append(1)
        if len(calls) == 2:
            raise InterruptedError  # a user question: the background rerank steps aside

    with pytest.raises(InterruptedError):
        scorer.scores(QUERY, PASSAGES, check=check)
    assert len(calls) == 2
    free = []  # the model is free for the user's question (tried from another thread)

    def try_lock():
        got = scorer.llm.lock.acquire(timeout=1)
        free.append(got)
        if got:
            scorer.llm.lock.release()

    other = threading.Thread(target=try_lock)
    other.start()
    other.join()
    assert free == [True]


def test_a_corrupt_cached_document_kv_is_recomputed(scorer):
    plain = scorer.scores(QUERY, PASSAGES, use_doc_kv=False)
    scorer.precompute(PASSAGES)
    doc_kv, prefix = scorer.doc_kv, scorer.tokens.prefix(PASSAGES[0])
    path = doc_kv.blobs._path(doc_kv.key(prefix))
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    np.testing.assert_allclose(scorer.scores(QUERY, PASSAGES), plain, atol=1e-5)
    assert doc_kv.blobs.get(doc_kv.key(prefix)) is not None  # stored again, intact


def test_a_cached_kv_that_does_not_load_is_recomputed(scorer):
    plain = scorer.scores(QUERY, PASSAGES, use_doc_kv=False)
    doc_kv, prefix = scorer.doc_kv, scorer.tokens.prefix(PASSAGES[1])
    doc_kv.blobs.put(KIND, doc_kv.key(prefix), b"not a llama.cpp state" * 10)  # valid checksum
    np.testing.assert_allclose(scorer.scores(QUERY, PASSAGES), plain, atol=1e-5)
    assert len(doc_kv.blobs.get(doc_kv.key(prefix))) > 1000  # replaced by a real state


def test_the_vocab_alone_tokenizes_as_the_model_does(llm):
    from assistant.llm.model_file import Vocab

    vocab = Vocab(default_llm_model())
    for text in ("Passage: ", "Ünïcode — naïve café\n", PASSAGES[0]):
        for first in (True, False):
            assert vocab.tokenize(text, first) == llm.tokenize(text, first)
