"""A BERT cross-encoder's forward, one layer at a time, in plain torch, from its model.safetensors.

The layer-wise pruned reranker (grating.py) needs the hidden states between layers and the
classifier head on any layer's [CLS]; transformers' modules do not hand out either without
running the whole stack. Tensors are read with pread (weights.py explains why not a memory map):
the word embedding through an LRU of rows (it is the largest tensor: a question reads a few
hundred of its 30k rows), the layers through weights.LayerWindow (resident or streamed).
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from assistant.config import ConfigError

DTYPES = {"F32": np.float32, "F16": np.float16}
BERT_HEADS = ("BertForSequenceClassification",)


@dataclass(frozen=True)
class BertArch:
    n_layers: int
    d_model: int
    n_head: int
    eps: float
    gelu_tanh: bool


class BertFile:
    """Random access to the tensors of a BERT cross-encoder's model.safetensors, by short name
    ("word", "layer.3.attention.self.query.weight", "classifier.weight"), without mapping it."""

    def __init__(self, folder: Path, config: dict) -> None:
        path = folder / "model.safetensors"
        if config.get("architectures", [None])[0] not in BERT_HEADS or not path.is_file():
            raise ConfigError(
                f"{folder}: pruned cross-encoder reranking reads a BERT cross-encoder's "
                f'model.safetensors ({", ".join(BERT_HEADS)}); use `rerank = "cross"` for this '
                "model"
            )
        with path.open("rb") as fh:
            (size,) = struct.unpack("<Q", fh.read(8))
            header = json.loads(fh.read(size))
        header.pop("__metadata__", None)
        self.base = 8 + size
        self.entries = {_short(name): entry for name, entry in header.items()}
        bad = {e["dtype"] for e in self.entries.values()} - set(DTYPES)
        if bad:
            raise ConfigError(f"{path}: tensors in {bad}; pruned reranking reads F32 or F16")
        self.arch = BertArch(
            n_layers=int(config["num_hidden_layers"]),
            d_model=int(config["hidden_size"]),
            n_head=int(config["num_attention_heads"]),
            eps=float(config.get("layer_norm_eps", 1e-12)),
            gelu_tanh=config.get("hidden_act", "gelu") in ("gelu_new", "gelu_pytorch_tanh"),
        )
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
            start += rows.start * int(np.prod(shape[1:])) * dtype.itemsize
            shape[0] = min(rows.stop, shape[0]) - rows.start
        count = int(np.prod(shape)) * dtype.itemsize
        return np.frombuffer(os.pread(self._fd, count, start), dtype=dtype).reshape(shape)

    def small(self, name: str) -> torch.Tensor:
        return torch.from_numpy(self.read(name).astype(np.float32))

    def layer(self, index: int) -> dict[str, torch.Tensor]:
        prefix = f"layer.{index}."
        return {n[len(prefix) :]: self.small(n) for n in self.entries if n.startswith(prefix)}

    def layer_bytes(self, index: int) -> int:
        prefix = f"layer.{index}."
        return sum(
            e["data_offsets"][1] - e["data_offsets"][0]
            for n, e in self.entries.items()
            if n.startswith(prefix)
        )


def _short(name: str) -> str:
    for prefix in ("bert.encoder.", "bert.embeddings.", "bert.", "encoder.", "embeddings."):
        if name.startswith(prefix):
            name = name[len(prefix) :]
            break
    return "word" if name == "word_embeddings.weight" else name


class Embeddings:
    """Word rows (an LRU, weights.EmbeddingRows) + positions + token types, layer-normed."""

    def __init__(self, weights: BertFile, rows) -> None:
        self.rows = rows
        self.position = weights.small("position_embeddings.weight")
        self.types = weights.small("token_type_embeddings.weight")
        self.norm = (weights.small("LayerNorm.weight"), weights.small("LayerNorm.bias"))
        self.eps = weights.arch.eps

    def __call__(self, ids: torch.Tensor, types: torch.Tensor) -> torch.Tensor:
        words = self.rows(ids.flatten().tolist()).view(*ids.shape, -1)
        h = words + self.position[: ids.shape[1]] + self.types[types]
        return F.layer_norm(h, h.shape[-1:], *self.norm, self.eps)


def layer(w: dict[str, torch.Tensor], arch: BertArch, h: torch.Tensor, mask: torch.Tensor):
    """One encoder layer (post-norm). h: [B, T, d]; mask: [B, T] True on real tokens."""
    b, t, d = h.shape

    def proj(name: str, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, w[f"{name}.weight"], w[f"{name}.bias"])

    def heads(x: torch.Tensor) -> torch.Tensor:
        return x.view(b, t, arch.n_head, d // arch.n_head).transpose(1, 2)

    q, k, v = (heads(proj(f"attention.self.{n}", h)) for n in ("query", "key", "value"))
    attn = F.scaled_dot_product_attention(q, k, v, attn_mask=mask[:, None, None, :])
    out = proj("attention.output.dense", attn.transpose(1, 2).reshape(b, t, d))
    ln = (w["attention.output.LayerNorm.weight"], w["attention.output.LayerNorm.bias"])
    h = F.layer_norm(h + out, (d,), *ln, arch.eps)
    x = F.gelu(proj("intermediate.dense", h), approximate="tanh" if arch.gelu_tanh else "none")
    ln = (w["output.LayerNorm.weight"], w["output.LayerNorm.bias"])
    return F.layer_norm(h + proj("output.dense", x), (d,), *ln, arch.eps)


class Head:
    """The classifier on [CLS]: pooler (dense + tanh) then the one-logit linear layer. Applied
    to any layer's [CLS] it gives that layer's provisional score."""

    def __init__(self, weights: BertFile) -> None:
        self.pooler = (weights.small("pooler.dense.weight"), weights.small("pooler.dense.bias"))
        self.out = (weights.small("classifier.weight"), weights.small("classifier.bias"))

    def __call__(self, h: torch.Tensor) -> torch.Tensor:
        pooled = torch.tanh(F.linear(h[:, 0], *self.pooler))
        return F.linear(pooled, *self.out)[:, 0]
