"""Calibrating the pruning threshold offline (rerank/policy.py's Pruner, GRATING): the policy
replayed on recorded provisional scores, and the lowest threshold whose top-k overlap with the
unpruned order reaches a target. Used by rerank_speed.py, rerank_quality.py and cross_pruned.py;
the app reads the threshold from its settings."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from assistant.rerank.policy import Pruner


def replay(
    trace: np.ndarray, final: np.ndarray, k: int, threshold: float, exact: bool = False
) -> list[int]:
    """The order a pruned run gives, from recorded scores: trace[c] = every candidate's
    provisional scores at check c; final = the scores after the last layer."""
    pruner = Pruner(len(final), k, threshold, exact)
    for row in trace:
        if pruner.finished:
            break
        pruner.step(row[pruner.active])
    if not pruner.finished:
        pruner.scores.update({i: float(final[i]) for i in pruner.active})
    return pruner.order()


def top_k_overlap(order: Sequence[int], reference: Sequence[int], k: int) -> float:
    return len(set(order[:k]) & set(reference[:k])) / k


def calibrate(
    traces: Sequence[tuple[np.ndarray, np.ndarray]], k: int, target: float, grid: Sequence[float]
) -> float:
    """The lowest threshold (most pruning) whose mean top-k overlap with the unpruned order
    reaches `target` on recorded runs; inf (never prune) when none does."""
    for threshold in sorted(grid):
        overlaps = [
            top_k_overlap(replay(t, f, k, threshold), list(np.argsort(-f, kind="stable")), k)
            for t, f in traces
        ]
        if np.mean(overlaps) >= target:
            return float(threshold)
    return math.inf


def rank_cut(trace: np.ndarray, final: np.ndarray, keep: Sequence[int]) -> list[int]:
    """GRATING's simplest schedule, replayed: at check c only the provisional top keep[c] of the
    running candidates go on (one that far down is taken not to reach the top-k); returns the
    order: survivors by final score, then the dropped (later drops first)."""
    active, dropped = list(range(len(final))), []
    for row, n in zip(trace, keep, strict=True):
        ranked = sorted(active, key=lambda i: (-row[i], i))
        active, dropped = ranked[:n], ranked[n:] + dropped
    return sorted(active, key=lambda i: (-final[i], i)) + dropped


def calibrate_cuts(
    traces: Sequence[tuple[np.ndarray, np.ndarray]], k: int, target: float
) -> list[int]:
    """Per check, the fewest candidates to keep (earliest check first, greedily) such that the
    mean top-k overlap with the unpruned order stays at `target` on recorded runs."""
    n, checks = len(traces[0][1]), len(traces[0][0])
    keep = [n] * checks
    for c in range(checks):
        for m in range(k, n + 1):
            trial = keep[:c] + [m] + [min(m, x) for x in keep[c + 1 :]]
            overlaps = [
                top_k_overlap(rank_cut(t, f, trial), list(np.argsort(-f, kind="stable")), k)
                for t, f in traces
            ]
            if np.mean(overlaps) >= target:
                keep = trial
                break
    return keep
