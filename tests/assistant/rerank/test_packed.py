"""The packed forward (no padding, the last layer on [CLS] only) against the padded one."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from assistant.rerank.bert import layer
from assistant.rerank.grating import CrossPruned
from assistant.rerank.packed import Packed, groups, packed_layer
from tests.assistant.rerank.test_cross import QUESTION
from tests.assistant.rerank.test_grating import MANY, logits

LENGTHS = [9, 3, 14, 6]  # four pairs' token counts


def padded_and_packed(engine: CrossPruned, lengths: list[int]):
    """Random hidden states for pairs of `lengths`: padded [b, T, d] + mask, and packed."""
    torch.manual_seed(1)
    d = engine.arch.d_model
    h = torch.randn(len(lengths), max(lengths), d)
    mask = torch.arange(max(lengths))[None, :] < torch.tensor(lengths)[:, None]
    return h, mask, torch.cat([h[r, :n] for r, n in enumerate(lengths)])


def layer_and_states(tiny_cross, index: int):
    """The tiny engine, random states for pairs of LENGTHS (padded, mask, packed) and the weights
    of its layer `index`."""
    engine = CrossPruned(str(tiny_cross))
    h, mask, rows = padded_and_packed(engine, LENGTHS)
    return engine, h, mask, rows, engine.window.get(index)


def test_a_packed_layer_equals_the_padded_layer_on_real_tokens(tiny_cross):
    engine, h, mask, rows, w = layer_and_states(tiny_cross, 0)
    padded = layer(w, engine.arch, h, mask)
    packed = packed_layer(w, engine.arch, rows, LENGTHS)
    expected = torch.cat([padded[r, :n] for r, n in enumerate(LENGTHS)])
    torch.testing.assert_close(packed, expected, atol=1e-5, rtol=1e-5)


def test_the_cls_only_layer_equals_the_full_layers_cls(tiny_cross):
    engine, _, _, rows, w = layer_and_states(tiny_cross, 3)
    full = packed_layer(w, engine.arch, rows, LENGTHS)
    cls = packed_layer(w, engine.arch, rows, LENGTHS, cls_only=True)
    assert cls.shape == (len(LENGTHS), engine.arch.d_model)
    torch.testing.assert_close(cls, full[[0, 9, 12, 26]], atol=1e-5, rtol=1e-5)


def test_groups_hold_at_most_the_row_budget_first_fit():
    lengths = [5, 40, 7, 8, 30, 2, 20]
    order = [1, 4, 6, 3, 2, 0, 5]
    out = groups(lengths, order, max_rows=40)
    assert out == [[1], [4, 3, 5], [6, 2, 0]]
    assert sorted(i for g in out for i in g) == sorted(order)
    assert groups([50, 3], [0, 1], max_rows=40) == [[0], [1]]  # too long: alone


def test_keep_takes_the_rows_of_the_kept_pairs():
    h = torch.arange(10.0)[:, None]
    group = Packed([7, 8, 9], [3, 5, 2], h)
    kept = group.keep({7, 9})
    assert kept.ids == [7, 9] and kept.lengths == [3, 2]
    assert kept.h[:, 0].tolist() == [0, 1, 2, 8, 9]
    assert kept.cls()[:, 0].tolist() == [0, 8]
    assert group.keep({7, 8, 9}) is group and group.keep(set()) is None


@pytest.mark.parametrize("rows", [16, 1024])
def test_packed_ranking_equals_the_padded_one(tiny_cross, rows):
    padded = CrossPruned(str(tiny_cross), chunk_size=3).rank(QUESTION, MANY, 3)
    packed = CrossPruned(str(tiny_cross), packed_rows=rows).rank(QUESTION, MANY, 3)
    np.testing.assert_allclose(logits(packed, len(MANY)), logits(padded, len(MANY)), atol=1e-5)
    assert packed.order == padded.order


def test_packed_pruning_stops_computing_decided_candidates(tiny_cross):
    run = CrossPruned(str(tiny_cross), packed_rows=64).rank(QUESTION, MANY, 3, threshold=0.0)
    assert sorted(run.order) == list(range(len(MANY)))
    assert run.candidate_layers < len(MANY) * 4


def test_packed_layer_states_equal_the_padded_ones(tiny_cross):
    padded = CrossPruned(str(tiny_cross)).layer_states(QUESTION, MANY)
    packed = CrossPruned(str(tiny_cross), packed_rows=64).layer_states(QUESTION, MANY)
    for a, b in zip(padded[0], packed[0], strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(packed[1], padded[1], atol=1e-5, rtol=1e-5)


def test_a_negative_packed_row_count_is_a_config_error(tmp_path):
    from assistant.config import ConfigError, load_settings

    cfg = tmp_path / "config.toml"
    cfg.write_text("[expert.reranker]\ncross_packed_rows = -5\n")
    with pytest.raises(ConfigError, match="reranker.cross_packed_rows: expected 0"):
        load_settings(cfg, env={})
    assert load_settings(None, env={}).reranker.cross_packed_rows == 1024
