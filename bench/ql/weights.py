"""The retired query-likelihood reranker's weights: every tensor of the GGUF dequantized once into
a safetensors file (float16 matrices, float32 vectors) with the architecture in its metadata,
then read a layer at a time through assistant/rerank/weights.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch

from assistant.rerank.weights import SafetensorsFile
from bench.ql.arch import Arch, read_arch

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


def head_name(weights: WeightFile) -> str:
    return HEAD if HEAD in weights.entries else EMBED


def head_blocks(weights: WeightFile, block: int = 16384) -> Iterator[torch.Tensor]:
    """The LM head in float32 row blocks, read one block at a time (never all resident)."""
    name = head_name(weights)
    for start in range(0, weights.shape(name)[0], block):
        rows = weights.read(name, slice(start, start + block))
        yield torch.from_numpy(rows.astype(np.float32))
