"""The torch pruned forward on a tiny random model: unpruned == an independent plain forward,
infinite threshold == the full ranking, the weight window, document KV reuse and its repair."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
import torch

from assistant.rerank.prompt import QLPrompt, QLTokens
from assistant.rerank.weights import LayerWindow
from bench.ql.forward import prefix_layer, rms_norm
from bench.ql.pruned import TorchQL
from bench.ql.torch_kv import TorchDocKV
from bench.ql.weights import EMBED, WeightFile
from cache.blobs import BlobStore
from cache.db import open_cache_db

from .tiny_model import tiny_arch, tiny_tokenize, write_tiny

PROMPT = QLPrompt("t", "passage :", "end", "write a question : ")
QUERY = "how tall is the tower in the old town"
PASSAGES = [" ".join(f"w{(i * 7 + j * (i + 3)) % 53}" for j in range(5 + 3 * i)) for i in range(11)]


@pytest.fixture(params=["llama", "gemma3"])
def weights(request, tmp_path) -> WeightFile:
    return WeightFile(write_tiny(tmp_path / "tiny.safetensors", tiny_arch(request.param)))


def engine(weights: WeightFile, doc_kv: TorchDocKV | None = None, chunk: int = 4) -> TorchQL:
    tokens = QLTokens(tiny_tokenize, PROMPT, 64)
    return TorchQL(weights, tokens, chunk_size=chunk, embed_rows=16, doc_kv=doc_kv)


def plain_scores(weights: WeightFile, eng: TorchQL) -> list[float]:
    """Mean log p(question) per passage from one unsplit, unbatched forward over all layers."""
    arch = weights.arch
    suffix, n_q = eng.tokens.suffix(QUERY)
    head = torch.from_numpy(weights.read(EMBED).astype(np.float32))
    out = []
    for passage in PASSAGES:
        seq = eng.tokens.prefix(passage) + suffix
        h = head[seq][None] * arch.embed_scale
        for layer in range(arch.n_layers):
            h, _ = prefix_layer(weights.layer(layer), arch, layer, h, torch.tensor([len(seq)]))
        logits = rms_norm(h[0], weights.small("output_norm.weight"), arch.eps) @ head.T
        logp = torch.log_softmax(logits, dim=-1)
        rows = range(len(seq) - n_q - 1, len(seq) - 1)
        out.append(float(np.mean([logp[r, seq[r + 1]].item() for r in rows])))
    return out


def full_order(scores) -> list[int]:
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


def test_unpruned_scores_equal_a_plain_forward(weights):
    eng = engine(weights)
    run = eng.rank(QUERY, PASSAGES, k=3)
    expected = plain_scores(weights, eng)
    got = [run.scores[i] for i in range(len(PASSAGES))]
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_infinite_threshold_returns_exactly_the_full_ranking(weights):
    eng = engine(weights)
    reference = full_order(plain_scores(weights, eng))
    run = eng.rank(QUERY, PASSAGES, k=3, threshold=math.inf, checks=range(weights.arch.n_layers))
    assert run.order == reference
    assert run.candidate_layers == len(PASSAGES) * weights.arch.n_layers


def test_asking_for_as_many_as_there_are_is_the_full_ranking(weights):
    eng = engine(weights)
    reference = full_order(plain_scores(weights, eng)[:4])
    assert eng.rank(QUERY, PASSAGES[:4], k=10, threshold=0.0).order == reference


def test_a_zero_threshold_prunes_and_still_returns_every_candidate(weights):
    eng = engine(weights)
    run = eng.rank(QUERY, PASSAGES, k=3, threshold=0.0, checks=range(1, weights.arch.n_layers))
    assert sorted(run.order) == list(range(len(PASSAGES)))
    assert run.candidate_layers < len(PASSAGES) * weights.arch.n_layers


def test_exact_order_mode_orders_its_top_k_by_final_scores(weights):
    eng = engine(weights)
    run = eng.rank(QUERY, PASSAGES, k=3, threshold=0.0, exact_order=True)
    final = {i: s for i, s in run.scores.items() if i in run.order[:3]}
    assert run.order[:3] == full_order([final.get(i, -math.inf) for i in range(len(PASSAGES))])[:3]


def test_the_sliding_window_never_holds_more_than_two_layers(weights, monkeypatch):
    seen: list[int] = []
    lock = threading.Lock()
    original = LayerWindow._submit

    def watched(self, index):
        future = original(self, index)
        with lock:
            seen.append(len(self._window))
        return future

    monkeypatch.setattr(LayerWindow, "_submit", watched)
    eng = engine(weights)
    loads = []
    monkeypatch.setattr(eng.window, "get", _spy(eng.window.get, loads, eng.window))
    eng.rank(QUERY, PASSAGES, k=3)
    assert seen and max(seen) <= 2
    assert eng.window.max_streamed <= 2
    assert all(len(held) <= 2 for held in loads)
    assert eng.window.held() == []  # released after the forward


def _spy(get, loads, window):
    def spy(index):
        result = get(index)
        loads.append(window.held())
        return result

    return spy


def test_a_check_that_raises_stops_the_forward_and_frees_the_window(weights):
    eng = engine(weights)
    layers = []

    def check():
        layers.append(len(layers))
        if len(layers) == 2:
            raise InterruptedError

    with pytest.raises(InterruptedError):
        eng.rank(QUERY, PASSAGES, 3, check=check)
    assert len(layers) == 2 and eng.window.held() == []
    assert eng.rank(QUERY, PASSAGES, 3).order == full_order(plain_scores(weights, eng))


def test_resident_layers_stay_loaded_and_only_the_rest_stream(weights):
    eng = TorchQL(weights, QLTokens(tiny_tokenize, PROMPT, 64), resident_layers=2)
    run = eng.rank(QUERY, PASSAGES, k=3)
    assert set(eng.window.resident) == {0, 1}
    assert run.order == engine(weights).rank(QUERY, PASSAGES, k=3).order


@pytest.fixture
def doc_kv(weights, tmp_path) -> TorchDocKV:
    blobs = BlobStore(open_cache_db(None), tmp_path / "kv", {"doc_kv": 1 << 30})
    return TorchDocKV(blobs, "tiny", weights.arch.n_layers)


def test_document_kv_gives_the_same_scores(weights, doc_kv):
    eng = engine(weights, doc_kv)
    plain = eng.rank(QUERY, PASSAGES, k=3)
    assert eng.precompute(PASSAGES) == len(PASSAGES)
    assert eng.precompute(PASSAGES) == 0  # all cached now
    cached = eng.rank(QUERY, PASSAGES, k=3)
    assert cached.order == plain.order
    np.testing.assert_allclose(
        [cached.scores[i] for i in range(len(PASSAGES))],
        [plain.scores[i] for i in range(len(PASSAGES))],
        atol=2e-3,  # the cache holds float16
    )


def test_a_corrupt_cached_document_kv_is_recomputed(weights, doc_kv):
    eng = engine(weights, doc_kv)
    eng.precompute(PASSAGES)
    prefix = eng.tokens.prefix(PASSAGES[0])
    path = doc_kv.blobs._path(doc_kv.key(prefix))
    path.write_bytes(path.read_bytes()[:-10] + b"0123456789")
    assert doc_kv.get(prefix) is None  # checksum caught it; the blob is dropped
    assert eng.precompute(PASSAGES) == 1  # and only it is recomputed
    assert doc_kv.get(prefix) is not None
