"""Per-layer linear probes for provisional scores, fitted without labels."""

from __future__ import annotations

import numpy as np
import torch

from assistant.rerank.grating import CrossPruned
from assistant.rerank.probes import Probes, fit
from tests.assistant.rerank.test_cross import QUESTION
from tests.assistant.rerank.test_grating import MANY


def test_fit_recovers_a_linear_map_and_round_trips(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((200, 8))
    w = rng.standard_normal(8)
    probes = fit({2: x}, x @ w + 0.5, ridge=1e-6)
    got = probes.score(2, torch.tensor(x, dtype=torch.float32)).numpy()
    np.testing.assert_allclose(got, x @ w + 0.5, atol=1e-3)
    probes.save(tmp_path / "p.safetensors")
    again = Probes.load(tmp_path / "p.safetensors")
    assert again.has(2) and not again.has(1)
    torch.testing.assert_close(again.weights[2], probes.weights[2])


def test_a_pruned_run_scores_check_layers_with_the_probes(tiny_cross):
    engine = CrossPruned(str(tiny_cross), chunk_size=3)
    states, final = engine.layer_states(QUESTION, MANY)
    assert len(states) == engine.arch.n_layers - 1 and states[0].shape == (len(MANY), 64)
    probes = fit({i: s.numpy() for i, s in enumerate(states)}, final.numpy())
    engine.probes = probes
    run = engine.rank(QUESTION, MANY, 3, checks=[1, 2])
    np.testing.assert_allclose(run.trace[0], probes.score(1, states[1]).numpy(), atol=1e-5)
    np.testing.assert_allclose(run.trace[-1], final.numpy(), atol=1e-5)  # last: the head
