"""Which candidates to stop computing, from provisional scores at an intermediate layer (GRATING).

Only the top-k matters. When the scores spread enough (coefficient of variation above a
threshold) they are clustered (1-D k-means); clusters above the one holding the k-th best are
accepted into the top-k, clusters below it dropped, and the boundary cluster goes on to the next
layer. Pruning ends when accepted + still-running = k. Candidates are independent in the batch,
so the same policy replays exactly on recorded scores, which calibrates the threshold
(bench/studies/pruning.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.cluster.vq import kmeans2


def dispersion(scores: np.ndarray) -> float:
    """Coefficient of variation |std / mean| (inf for a zero mean)."""
    centre = abs(float(np.mean(scores)))
    return float(np.std(scores)) / centre if centre > 0 else math.inf


def clusters_1d(scores: np.ndarray, n: int) -> np.ndarray:
    """k-means labels (deterministic); 1-D clusters are intervals of the sorted scores."""
    n = min(n, len(np.unique(scores)))
    if n < 2:
        return np.zeros(len(scores), dtype=int)
    _, labels = kmeans2(scores.astype(np.float64), n, minit="++", seed=0, missing="raise")
    return labels


@dataclass
class Pruner:
    n: int
    k: int
    threshold: float
    exact_order: bool = False  # only drop; the top-k keeps running to the last layer
    n_clusters: int = 3
    active: list[int] = field(init=False)
    accepted: list[int] = field(init=False, default_factory=list)  # best first
    dropped: list[int] = field(init=False, default_factory=list)  # latest drop first
    scores: dict[int, float] = field(init=False, default_factory=dict)  # latest per candidate

    def __post_init__(self) -> None:
        self.active = list(range(self.n))
        self.k = min(self.k, self.n)

    @property
    def settled(self) -> bool:
        """No decision left: the remaining candidates all belong to the top-k."""
        return len(self.accepted) + len(self.active) <= self.k

    @property
    def finished(self) -> bool:
        """Nothing left to compute: settled, and every running candidate has a score to be
        ordered by (the exact mode always needs the last layer)."""
        scored = all(i in self.scores for i in self.active)
        return self.settled and scored and not self.exact_order

    def step(self, scores: Sequence[float]) -> None:
        """Provisional scores of `active`, in its order."""
        s = np.asarray(scores, dtype=np.float64)
        self.scores.update(zip(self.active, s.tolist(), strict=True))
        if self.settled or dispersion(s) <= self.threshold:
            return
        labels = clusters_1d(s, self.n_clusters)
        centres = np.array([s[labels == c].mean() for c in labels])
        need = self.k - len(self.accepted)
        boundary = centres[np.argsort(-s, kind="stable")[need - 1]]
        ids = np.array(self.active)
        above, below = centres > boundary, centres < boundary
        up = [] if self.exact_order else _best_first(ids[above], s[above])
        down = _best_first(ids[below], s[below])
        self.accepted += up
        self.dropped = down + self.dropped
        self.active = [i for i in self.active if i not in set(up) | set(down)]

    def order(self) -> list[int]:
        """Every candidate, best first: accepted, the running ones by their latest score,
        then the dropped (dropped later ranks higher)."""
        running = sorted(self.active, key=lambda i: (-self.scores.get(i, -math.inf), i))
        return self.accepted + running + self.dropped


def _best_first(ids: np.ndarray, scores: np.ndarray) -> list[int]:
    return [int(ids[i]) for i in np.lexsort((ids, -scores))]


@dataclass
class PrunedRun:
    order: list[int]  # every candidate, best first
    scores: dict[int, float]  # the latest score of each candidate
    trace: list[np.ndarray] = field(default_factory=list)  # per check: scores (nan: not run)
    check_layers: list[int] = field(default_factory=list)
    candidate_layers: int = 0  # layer evaluations summed over candidates
