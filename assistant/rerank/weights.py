"""The torch reranker's weights: dequantized once from the GGUF into a safetensors file in the
home dir, then read a layer at a time.

Tensors are read with pread into fresh buffers rather than through a memory map: pages of a map
stay resident (and count in RSS) after use, while a pread copy is freed with the layer, so the
sliding window really holds two layers. Matrices are kept in float16 (half the bytes per
layer in the window; forward.py widens one at a time), norms in float32. The token embedding
(also the tied LM head, the largest tensor) is read in row blocks: an LRU of rows for the input
embedding, a streamed pass for the LM head.
"""

from __future__ import annotations

import json
import os
import struct
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np
import torch

from assistant.rerank.arch import Arch, read_arch

DTYPES = {"F32": np.float32, "F16": np.float16}
EMBED = "token_embd.weight"
HEAD = "output.weight"  # absent when the LM head is tied to the embedding


def export_weights(gguf_path: Path, out: Path) -> Path:
    """Dequantize every tensor of `gguf_path` into `out` (safetensors; float16 matrices, float32
    vectors) with the architecture in its metadata. Written to a temp file first."""
    import gguf  # only for the one-time export
    from safetensors.numpy import save_file

    reader = gguf.GGUFReader(gguf_path)
    meta = {k: f.contents() for k, f in reader.fields.items() if not k.startswith("tokenizer.")}
    arch = read_arch(meta)
    tensors = {}
    for t in reader.tensors:
        data = gguf.quants.dequantize(t.data, t.tensor_type)
        tensors[t.name] = data.astype(np.float16 if data.ndim > 1 else np.float32)
    tmp = out.with_suffix(".tmp")
    out.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    save_file(tensors, str(tmp), metadata={"arch": json.dumps(arch.__dict__)})
    tmp.replace(out)
    return out


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


class WeightFile(SafetensorsFile):
    """The exported GGUF weights (export_weights), with the architecture in their metadata."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.arch = Arch(**json.loads(self.metadata["arch"]))

    def shape(self, name: str) -> tuple[int, ...]:
        return tuple(self.entries[name]["shape"])

    def layer(self, index: int) -> dict[str, torch.Tensor]:
        prefix = f"blk.{index}."
        return {
            name[len(prefix) :]: torch.from_numpy(self.read(name).copy())
            for name in self.entries
            if name.startswith(prefix)
        }

    def layer_bytes(self, index: int) -> int:
        return self.bytes_under(f"blk.{index}.")

    def small(self, name: str) -> torch.Tensor:
        return torch.from_numpy(self.read(name).copy())


class LayerWindow:
    """Layer weights for a forward that walks the layers in order: the first `resident` layers
    stay loaded (the preload buffer); the others live in a window of the current layer and the
    next, which a background thread reads while the current one computes."""

    def __init__(self, weights: WeightFile, resident: int = 0, preload: bool = True) -> None:
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

    def __init__(self, weights: WeightFile, capacity: int = 8192, name: str = EMBED) -> None:
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


def head_name(weights: WeightFile) -> str:
    return HEAD if HEAD in weights.entries else EMBED


def head_blocks(weights: WeightFile, block: int = 16384) -> Iterator[torch.Tensor]:
    """The LM head in float32 row blocks, read one block at a time (never all resident)."""
    name = head_name(weights)
    for start in range(0, weights.shape(name)[0], block):
        rows = weights.read(name, slice(start, start + block))
        yield torch.from_numpy(rows.astype(np.float32))
