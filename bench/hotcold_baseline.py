"""bench/scale.py's baseline for the hot/cold plan (knowledge/hotcold.py): the same budget spent
on clusters drawn without regard to access."""

from __future__ import annotations

import numpy as np

from assistant.knowledge.hotcold import Plan, fill


def plan_uniform(list_bytes: np.ndarray, budget_bytes: int, seed: int = 0) -> Plan:
    """Clusters in a random order (seeded) while they fit in `budget_bytes`."""
    hot = fill(np.random.default_rng(seed).permutation(len(list_bytes)), list_bytes, budget_bytes)
    return Plan(hot, int(list_bytes[hot].sum()), budget_bytes, float("nan"))
