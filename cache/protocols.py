"""The small interfaces through which the cache library sees the application's models."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors, one row per text."""

    name: str

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray: ...
