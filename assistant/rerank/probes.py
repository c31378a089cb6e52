"""Per-layer linear probes: a provisional score from an intermediate layer's [CLS], fitted to
the cross-encoder's own final logits on unlabelled (question, passage) pairs. No relevance
label is needed: the probe learns to predict what the whole model will say (self-distillation),
which is what pruning needs, where the classifier head on an early [CLS] may not (its layers
were never trained to be read there)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file


@dataclass
class Probes:
    weights: dict[int, torch.Tensor]  # layer → [d + 1]: weights, then the bias

    def has(self, layer: int) -> bool:
        return layer in self.weights

    def score(self, layer: int, cls: torch.Tensor) -> torch.Tensor:
        w = self.weights[layer]
        return cls @ w[:-1] + w[-1]

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        save_file({f"layer{n}": w.contiguous() for n, w in self.weights.items()}, str(path))

    @classmethod
    def load(cls, path: Path) -> Probes:
        return cls({int(k[5:]): w for k, w in load_file(str(path)).items()})


def fit(states: Mapping[int, np.ndarray], final: np.ndarray, ridge: float = 1.0) -> Probes:
    """Ridge regression per layer: states[layer] is [pairs, d] of [CLS] after that layer,
    `final` the pairs' final logits."""
    out = {}
    for layer, x in states.items():
        x1 = np.hstack([x, np.ones((len(x), 1))]).astype(np.float64)
        reg = ridge * np.eye(x1.shape[1])
        reg[-1, -1] = 0.0  # the bias is not shrunk
        w = np.linalg.solve(x1.T @ x1 + reg, x1.T @ final.astype(np.float64))
        out[layer] = torch.tensor(w, dtype=torch.float32)
    return Probes(out)
