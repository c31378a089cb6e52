"""bench/pruning.py: the pruning policy replayed on recorded scores, and the threshold it
calibrates."""

from __future__ import annotations

import math

import numpy as np

from bench.pruning import calibrate, replay, top_k_overlap


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


def test_overlap():
    assert top_k_overlap([1, 2, 3], [3, 2, 9], 3) == 2 / 3
