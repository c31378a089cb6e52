"""The layer-wise pruned cross-encoder (GRATING) against the whole-model scorer."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from assistant.rerank.cross import CrossScorer
from assistant.rerank.grating import CrossPruned
from tests.assistant.rerank.test_cross import PASSAGES, QUESTION

MANY = [f"{p} (mail {n})" for n in range(3) for p in PASSAGES] + ["kitchen work begins 2 March"]


def logits(run, n: int) -> np.ndarray:
    return np.array([run.scores[i] for i in range(n)])


def test_unpruned_equals_the_whole_model(tiny_cross):
    reference = CrossScorer(str(tiny_cross)).scores(QUESTION, MANY)
    run = CrossPruned(str(tiny_cross), chunk_size=3).rank(QUESTION, MANY, 3)
    np.testing.assert_allclose(logits(run, len(MANY)), reference, atol=1e-5)
    assert run.order[:3] == list(np.argsort(-reference, kind="stable")[:3])
    assert run.candidate_layers == len(MANY) * 4  # nothing pruned


def test_streamed_layers_give_the_same_scores(tiny_cross):
    resident = CrossPruned(str(tiny_cross)).rank(QUESTION, MANY, 3)
    engine = CrossPruned(str(tiny_cross), resident_layers=0)
    streamed = engine.rank(QUESTION, MANY, 3)
    np.testing.assert_allclose(logits(streamed, len(MANY)), logits(resident, len(MANY)))
    assert engine.window.max_streamed <= 2 and engine.window.held() == []


def test_resident_layers_load_as_the_first_forward_reaches_them(tiny_cross):
    preloaded = CrossPruned(str(tiny_cross)).rank(QUESTION, MANY, 3)
    engine = CrossPruned(str(tiny_cross), preload=False)
    assert engine.window.resident == {}  # nothing read before the first question
    run = engine.rank(QUESTION, MANY, 3)
    np.testing.assert_allclose(logits(run, len(MANY)), logits(preloaded, len(MANY)))
    assert sorted(engine.window.resident) == [0, 1, 2, 3] and engine.window.held() == []


def test_int8_layers_keep_the_scores_close(tiny_cross):
    exact = logits(CrossPruned(str(tiny_cross)).rank(QUESTION, MANY, 3), len(MANY))
    engine = CrossPruned(str(tiny_cross), int8=True)
    assert "attention.self.query.weight" not in engine.window.resident[0]
    approx = logits(engine.rank(QUESTION, MANY, 3), len(MANY))
    assert not np.array_equal(approx, exact)  # the int8 product really ran
    assert np.abs(approx - exact).max() <= 0.02 * np.abs(exact).max()


def test_bf16_layers_keep_the_scores_close(tiny_cross):
    exact = logits(CrossPruned(str(tiny_cross)).rank(QUESTION, MANY, 3), len(MANY))
    engine = CrossPruned(str(tiny_cross), bf16=True)
    w = engine.window.resident[0]
    assert w["intermediate.dense.weight"].dtype == torch.bfloat16
    assert w["output.LayerNorm.weight"].dtype == torch.float32  # norms stay float32
    approx = logits(engine.rank(QUESTION, MANY, 3), len(MANY))
    assert not np.array_equal(approx, exact)  # the bfloat16 product really ran
    assert np.abs(approx - exact).max() <= 0.02 * np.abs(exact).max()


@pytest.mark.parametrize("wanted", [True, False])
def test_the_loader_uses_bf16_only_where_asked_and_native(tiny_cross, wanted):
    from assistant.config import Settings
    from assistant.rerank.bert import native_bf16
    from assistant.rerank.loader import make_cross_pruned

    settings = Settings()
    settings.reranker.model, settings.reranker.cross_bf16 = str(tiny_cross), wanted
    engine = make_cross_pruned(settings)
    assert engine.weights.bf16 == (wanted and native_bf16())


@pytest.mark.parametrize("rows", [0, 512])
def test_the_loader_packs_as_configured(tiny_cross, rows):
    from assistant.config import Settings
    from assistant.rerank.loader import make_cross_pruned
    from assistant.rerank.packed import Packed

    settings = Settings()
    settings.reranker.model, settings.reranker.cross_packed_rows = str(tiny_cross), rows
    engine = make_cross_pruned(settings)
    assert engine.packed_rows == rows
    assert isinstance(engine._chunks(QUESTION, MANY)[0], Packed) == (rows > 0)


def test_pruning_stops_computing_decided_candidates(tiny_cross):
    engine = CrossPruned(str(tiny_cross), chunk_size=4)
    run = engine.rank(QUESTION, MANY, 3, threshold=0.0)
    assert sorted(run.order) == list(range(len(MANY)))
    assert run.candidate_layers < len(MANY) * 4
    # the run ended before the last layer, or dropped candidates were not scored again
    assert run.check_layers[-1] < 3 or np.isnan(run.trace[-1]).any()
    assert run.check_layers[0] == 1  # checks start after the second layer


def test_the_check_can_stop_a_run_and_the_window_is_released(tiny_cross):
    engine = CrossPruned(str(tiny_cross), resident_layers=0)
    layers = []

    def check():
        layers.append(1)
        if len(layers) == 2:
            raise RuntimeError("user question")

    with pytest.raises(RuntimeError):
        engine.rank(QUESTION, MANY, 3, check=check)
    assert engine.window.held() == []


def test_the_reranker_runs_cross_pruned_with_its_threshold(tiny_cross, tmp_path):
    from assistant.config import Settings
    from assistant.rerank.loader import make_reranker
    from tests.assistant.rerank.test_cross import hits

    settings = Settings()
    settings.rerank, settings.reranker.model = "cross-pruned", str(tiny_cross)
    settings.reranker.cross_threshold = math.inf
    reranker = make_reranker(settings, tmp_path, blobs=None)
    reference = CrossScorer(str(tiny_cross)).scores(QUESTION, MANY)
    chosen = reranker.rerank(QUESTION, hits(MANY), 3)
    assert [h.chunk_id for h in chosen] == list(np.argsort(-reference, kind="stable")[:3])


@pytest.mark.slow
@pytest.mark.parametrize(
    "engine", [{"resident_layers": 2}, {"packed_rows": 128}], ids=["padded", "packed"]
)
def test_minilm_sized_cross_encoder_matches_sentence_transformers(tmp_path, engine):
    """The shipped MiniLM weights with a fresh one-logit head: the real model's shape, padded
    batches with streamed layers and the packed forward."""
    import torch
    from sentence_transformers import CrossEncoder

    from assistant.knowledge.embeddings import default_embedding_model

    torch.manual_seed(0)
    CrossEncoder(str(default_embedding_model()), num_labels=1).save(str(tmp_path / "ce"))
    reference = CrossScorer(str(tmp_path / "ce")).scores(QUESTION, MANY)
    run = CrossPruned(str(tmp_path / "ce"), **engine).rank(QUESTION, MANY, 3)
    np.testing.assert_allclose(logits(run, len(MANY)), reference, atol=1e-4)
