"""bench/studies/pruning.py: the pruning policy replayed on recorded scores, and the threshold it
calibrates."""

from __future__ import annotations

import math

import numpy as np

from bench.studies.pruning import calibrate, calibrate_cuts, rank_cut, replay, top_k_overlap


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


def test_rank_cut_keeps_the_provisional_top_and_orders_survivors_by_final_score():
    trace = np.array([[5.0, 4.0, 3.0, 2.0, 1.0], [1.0, 2.0, 3.0, 0.0, 0.0]])
    final = np.array([0.0, 1.0, 2.0, 9.0, 9.0])
    # check 1 keeps 0, 1, 2 (3 and 4 dropped); check 2 keeps 2 and 1 (0 dropped)
    assert rank_cut(trace, final, [3, 2]) == [2, 1, 0, 3, 4]


def test_calibrated_cuts_meet_the_target_and_cut_where_the_scores_agree():
    rng = np.random.default_rng(3)
    traces = []
    for _ in range(6):
        final = rng.normal(0, 1, 20)
        early = rng.normal(0, 1, 20)  # the first check says nothing about the final order
        traces.append((np.stack([early, final + rng.normal(0, 0.01, 20)]), final))
    keep = calibrate_cuts(traces, 5, 1.0)
    assert keep[0] == 20 and keep[1] == 5  # no cut on noise; a sharp cut where they agree
    for trace, final in traces:
        reference = list(np.argsort(-final, kind="stable"))
        assert top_k_overlap(rank_cut(trace, final, keep), reference, 5) == 1.0
