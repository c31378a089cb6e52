"""The cross-encoder's weights read a layer at a time (bert.py, grating.py).

Tensors are read with pread into fresh buffers rather than through a memory map: pages of a map
stay resident (and count in RSS) after use, while a pread copy is freed with the layer, so the
sliding window really holds two layers. The token embedding (the largest tensor) is read in row
blocks, kept in an LRU of rows."""

from __future__ import annotations

import json
import os
import struct
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

DTYPES = {"F32": np.float32, "F16": np.float16}


class SafetensorsFile:
    """Random access to the tensors of one safetensors file, without mapping it; `rename` maps
    a tensor's stored name to the name it is read by."""

    def __init__(self, path: Path, rename: Callable[[str], str] = lambda name: name) -> None:
        self.path = path
        with path.open("rb") as fh:
            (size,) = struct.unpack("<Q", fh.read(8))
            header = json.loads(fh.read(size))
        self.base = 8 + size
        self.metadata = header.pop("__metadata__", {})
        self.entries = {rename(name): entry for name, entry in header.items()}
        self._fd = os.open(path, os.O_RDONLY)

    def close(self) -> None:
        os.close(self._fd)

    def read(self, name: str, rows: slice | None = None) -> np.ndarray:
        """The tensor (or a block of its rows) as a new array."""
        entry = self.entries[name]
        dtype = np.dtype(DTYPES[entry["dtype"]])
        shape = list(entry["shape"])
        start = self.base + entry["data_offsets"][0]
        if rows is not None:
            row_bytes = int(np.prod(shape[1:])) * dtype.itemsize
            start += rows.start * row_bytes
            shape[0] = min(rows.stop, shape[0]) - rows.start
        out = np.empty(shape, dtype=dtype)  # read straight into it: no bytes object to copy
        if os.preadv(self._fd, [memoryview(out).cast("B")], start) != out.nbytes:
            raise OSError(f"{self.path}: truncated (tensor {name} ends past the file)")
        return out

    def bytes_under(self, prefix: str) -> int:
        """Stored bytes of the tensors whose names start with `prefix` (one layer's)."""
        return sum(
            e["data_offsets"][1] - e["data_offsets"][0]
            for n, e in self.entries.items()
            if n.startswith(prefix)
        )


class LayeredFile(Protocol):
    """A weights file read a layer at a time (bert.BertFile; the benches' GGUF export)."""

    arch: Any

    def layer(self, index: int) -> dict[str, torch.Tensor]: ...


class LayerWindow:
    """Layer weights for a forward that walks the layers in order: the first `resident` layers
    stay loaded (the preload buffer); the others live in a window of the current layer and the
    next, which a background thread reads while the current one computes."""

    def __init__(self, weights: LayeredFile, resident: int = 0, preload: bool = True) -> None:
        """`preload`: read the resident layers now; otherwise each is read (ahead, while the
        layer before it computes) the first time a forward reaches it, then kept: the same
        resident bytes, without waiting for all of them before the first forward."""
        self.weights = weights
        self.n_layers = weights.arch.n_layers
        self.keep = set(range(min(resident, self.n_layers)))
        self.resident = {i: weights.layer(i) for i in self.keep} if preload else {}
        self._window: dict[int, Future] = {}
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="layer-prefetch")
        self._lock = threading.Lock()
        self.max_streamed = 0  # the most streamed layers held at once

    def get(self, index: int) -> dict[str, torch.Tensor]:
        if index in self.resident:
            self._prefetch(index + 1)
            return self.resident[index]
        with self._lock:
            for old in [i for i in self._window if i < index]:
                del self._window[old]
            future = self._window.get(index) or self._submit(index)
        self._prefetch(index + 1)
        tensors = future.result()
        if index in self.keep:  # a resident layer read on first use: kept from now on
            with self._lock:
                self.resident[index] = tensors
                self._window.pop(index, None)
        return tensors

    def _prefetch(self, index: int) -> None:
        if index < self.n_layers and index not in self.resident:
            with self._lock:
                if index not in self._window:
                    self._submit(index)

    def _submit(self, index: int) -> Future:
        self._window[index] = self._pool.submit(self.weights.layer, index)
        self.max_streamed = max(self.max_streamed, len(self._window))
        return self._window[index]

    def held(self) -> list[int]:
        with self._lock:
            return sorted(self._window)

    def release(self) -> None:
        """Drop the streamed layers (the resident ones stay) once a forward is done."""
        with self._lock:
            self._window.clear()

    def close(self) -> None:
        self.release()
        self._pool.shutdown(wait=True)


class EmbeddingRows:
    """Rows of the embedding (or LM head) read on demand and kept in an LRU of `capacity`, in
    one float32 table allocated up front (its pages become resident as rows fill them). Rows
    as separate small tensors sat in the heap between a forward's short-lived buffers and kept
    freed pages from going back to the system: the RSS grew with every question's new words."""

    def __init__(self, weights: SafetensorsFile, capacity: int, name: str) -> None:
        self.weights = weights
        self.capacity = capacity
        self.name = name
        self.table = torch.empty(capacity, int(np.prod(weights.entries[name]["shape"][1:])))
        self._slots: OrderedDict[int, int] = OrderedDict()  # token → row of the table
        self.hits = self.misses = 0

    def __call__(self, tokens: list[int]) -> torch.Tensor:
        distinct = list(dict.fromkeys(tokens))
        if len(distinct) > self.capacity:  # more than the table holds: read, keep none
            rows = {t: self._read(t) for t in distinct}
            return torch.stack([rows[t] for t in tokens])
        slots = {t: self._slot(t) for t in distinct}
        return self.table[torch.tensor([slots[t] for t in tokens], dtype=torch.long)]

    def _slot(self, token: int) -> int:
        slot = self._slots.get(token)
        if slot is not None:
            self._slots.move_to_end(token)
            self.hits += 1
            return slot
        self.misses += 1
        if len(self._slots) < self.capacity:
            slot = len(self._slots)
        else:
            _, slot = self._slots.popitem(last=False)
        self.table[slot] = self._read(token)
        self._slots[token] = slot
        return slot

    def _read(self, token: int) -> torch.Tensor:
        row = self.weights.read(self.name, slice(token, token + 1))[0]
        return torch.from_numpy(row.astype(np.float32))
