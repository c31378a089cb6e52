from __future__ import annotations

import math

import numpy as np

from assistant.rerank.policy import Pruner, dispersion


def test_low_dispersion_prunes_nothing():
    pruner = Pruner(6, 2, threshold=0.5)
    pruner.step([-1.0, -1.01, -1.02, -0.99, -1.0, -1.03])
    assert pruner.active == list(range(6)) and not pruner.accepted and not pruner.dropped


def test_clear_clusters_are_accepted_and_dropped_around_the_kth():
    scores = [-0.5, -3.0, -1.5, -3.1, -0.6, -1.6, -2.9]
    pruner = Pruner(7, 3, threshold=0.1)
    pruner.step(scores)
    assert pruner.accepted == [0, 4]  # the top cluster, best first
    assert pruner.active == [2, 5]  # the boundary cluster holds the 3rd best
    assert pruner.dropped == [6, 1, 3]
    pruner.step([-1.2, -1.9])  # spread enough: the boundary cluster splits
    assert pruner.finished
    assert pruner.order()[:3] == [0, 4, 2]


def test_exact_order_only_drops():
    pruner = Pruner(7, 3, threshold=0.1, exact_order=True)
    pruner.step([-0.5, -3.0, -1.5, -3.1, -0.6, -1.6, -2.9])
    assert pruner.accepted == [] and sorted(pruner.active) == [0, 2, 4, 5]
    assert not pruner.finished


def test_dispersion():
    assert dispersion(np.array([-1.0, -3.0])) == 0.5
    assert dispersion(np.array([0.0, 0.0])) == math.inf
