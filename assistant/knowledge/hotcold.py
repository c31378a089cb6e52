"""Which IVF clusters stay resident: access counts and the hot-set plan (VectorLiteRAG's split,
with RAM as the fast tier and the index file as the slow one).

Each search adds its probed clusters to the counts: a user's question with weight 1, a question
the precompute predicted with `predicted_weight` (a prediction says what may be asked, an asked
question what is). Counts decay, so the plan follows what is asked now. The plan fills the memory
budget with the clusters of most probes per byte; with no counts yet a cluster's size stands in
(a query lands in a cluster about as often as a vector does, so
per byte all are alike and the plan just fills the budget).
"""

from __future__ import annotations

import logging
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Plan:
    hot: np.ndarray  # cluster numbers kept resident
    hot_bytes: int
    budget_bytes: int
    share_of_probes: float  # the counted probes the hot set would have served


def plan_hot(counts: np.ndarray, list_bytes: np.ndarray, budget_bytes: int) -> Plan:
    """The clusters of most (decayed) probes per byte that fit in `budget_bytes`."""
    prior = list_bytes / max(int(list_bytes.sum()), 1) * 1e-6  # breaks ties, orders a cold start
    value = (counts + prior) / np.maximum(list_bytes, 1)
    hot = fill(np.argsort(-value, kind="stable"), list_bytes, budget_bytes)
    total = float(counts.sum())
    share = float(counts[hot].sum()) / total if total else 0.0
    return Plan(hot, int(list_bytes[hot].sum()), budget_bytes, share)


def fill(order: np.ndarray, list_bytes: np.ndarray, budget_bytes: int) -> np.ndarray:
    """The clusters taken in `order` while they fit (one too large is passed over)."""
    chosen, used = [], 0
    for cluster in order.tolist():
        if used + list_bytes[cluster] <= budget_bytes:
            chosen.append(cluster)
            used += int(list_bytes[cluster])
    return np.array(sorted(chosen), dtype=np.int64)


class AccessCounts:
    """Decayed probe counts per cluster, saved beside the index so a restart keeps the plan."""

    def __init__(self, nlist: int, path: Path | None, half_life: float = 2000.0) -> None:
        self.path = path
        self.decay = 0.5 ** (1.0 / half_life)  # per recorded search
        self.counts = self._load(nlist)
        self.since_plan = 0

    def _load(self, nlist: int) -> np.ndarray:
        if self.path is not None and self.path.exists():
            try:
                counts = np.load(self.path, allow_pickle=False)
                whole = isinstance(counts, np.ndarray) and counts.shape == (nlist,)
                if whole and np.isfinite(counts).all():
                    return counts.astype(np.float64)
                log.warning("%s: counts for another index; starting afresh", self.path)
            except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:  # EOF: empty
                log.warning("%s: unreadable access counts (%s); starting afresh", self.path, exc)
        return np.zeros(nlist)

    def record(self, clusters: np.ndarray, weight: float) -> None:
        self.counts *= self.decay
        self.counts[clusters] += weight
        self.since_plan += 1

    def save(self) -> None:
        if self.path is None:
            return
        tmp = self.path.with_suffix(".tmp.npy")
        np.save(tmp, self.counts)
        os.chmod(tmp, 0o600)
        tmp.replace(self.path)
