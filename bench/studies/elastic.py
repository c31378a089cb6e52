"""Elastic loading (WRX): how many leading layers to keep resident so that a question's pruned
forward meets a latency target within a memory budget.

A streamed layer costs max(load, compute) when its read overlaps the previous layer's compute
(the window's prefetch), plus the first layer's load when nothing is resident; a resident layer
costs only its compute. The planner keeps the fewest layers that meet the target.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LayerCosts:
    n_layers: int
    layer_bytes: int
    load_s: float  # read one layer from the weight file
    compute_s: float  # one layer for one question's candidates


def predicted_latency(costs: LayerCosts, resident: int) -> float:
    streamed = costs.n_layers - resident
    if streamed <= 0:
        return costs.n_layers * costs.compute_s
    first_load = costs.load_s if resident == 0 else max(0.0, costs.load_s - costs.compute_s)
    per_streamed = max(costs.load_s, costs.compute_s)
    return resident * costs.compute_s + first_load + (streamed - 1) * per_streamed + costs.compute_s


def plan_resident(costs: LayerCosts, target_s: float, budget_bytes: int) -> int:
    """The fewest resident layers that meet `target_s` within `budget_bytes`; when none does,
    as many as the budget allows (the fastest it can be)."""
    most = min(costs.n_layers, budget_bytes // max(costs.layer_bytes, 1))
    for n in range(most + 1):
        if predicted_latency(costs, n) <= target_s:
            return n
    return most
