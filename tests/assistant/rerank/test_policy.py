from __future__ import annotations

import math

import numpy as np

from assistant.rerank.policy import Pruner, calibrate, dispersion, replay, top_k_overlap


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


def test_replay_with_infinite_threshold_is_the_final_order():
    rng = np.random.default_rng(1)
    trace, final = rng.normal(-2, 1, (4, 20)), rng.normal(-2, 1, 20)
    assert replay(trace, final, 5, math.inf) == list(np.argsort(-final, kind="stable"))


def test_calibrate_picks_the_most_pruning_threshold_that_meets_the_target():
    rng = np.random.default_rng(2)
    traces = []
    for _ in range(5):
        final = rng.normal(-2, 1, 20)
        noisy = final + rng.normal(0, 0.8, (3, 20))  # provisional: final plus noise
        traces.append((noisy, final))
    grid = [0.0, 0.05, 0.1, 0.2, 0.4, 1.0, 10.0]
    chosen = calibrate(traces, 5, 0.9, grid)

    def precision(threshold: float) -> float:
        refs = [list(np.argsort(-f, kind="stable")) for _, f in traces]
        orders = [replay(t, f, 5, threshold) for t, f in traces]
        return float(np.mean([top_k_overlap(o, r, 5) for o, r in zip(orders, refs, strict=True)]))

    assert precision(chosen) >= 0.9
    assert all(precision(t) < 0.9 for t in grid if t < chosen)
    assert calibrate(traces, 5, 1.01, grid) == math.inf  # unreachable: never prune


def test_dispersion_and_overlap():
    assert dispersion(np.array([-1.0, -3.0])) == 0.5
    assert dispersion(np.array([0.0, 0.0])) == math.inf
    assert top_k_overlap([1, 2, 3], [3, 2, 9], 3) == 2 / 3
