"""A BERT cross-encoder's forward, one layer at a time, in plain torch, from its model.safetensors.

The layer-wise pruned reranker (grating.py) needs the hidden states between layers and the
classifier head on any layer's [CLS]; transformers' modules do not hand out either without
running the whole stack. Tensors are read with pread (weights.py explains why not a memory map):
the word embedding through an LRU of rows (it is the largest tensor: a question reads a few
hundred of its 30k rows), the layers through weights.LayerWindow (resident or streamed).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from assistant.config import ConfigError
from assistant.rerank import bf16
from assistant.rerank.weights import DTYPES, SafetensorsFile

BERT_HEADS = ("BertForSequenceClassification",)
# int8 activations in 7 bits: fbgemm's int8 product saturates on CPUs without VNNI otherwise
REDUCE_RANGE = True


@dataclass(frozen=True)
class BertArch:
    n_layers: int
    d_model: int
    n_head: int
    eps: float
    gelu_tanh: bool


class BertFile(SafetensorsFile):
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
        super().__init__(path, _short)
        self.bf16 = False  # layers come back with bfloat16 matrices and biases
        self.int8 = False  # layers come back with int8 matrices (quantize_layer)
        bad = {e["dtype"] for e in self.entries.values()} - set(DTYPES)
        if bad:
            self.close()
            raise ConfigError(f"{path}: tensors in {bad}; pruned reranking reads F32 or F16")
        self.arch = BertArch(
            n_layers=int(config["num_hidden_layers"]),
            d_model=int(config["hidden_size"]),
            n_head=int(config["num_attention_heads"]),
            eps=float(config.get("layer_norm_eps", 1e-12)),
            gelu_tanh=config.get("hidden_act", "gelu") in ("gelu_new", "gelu_pytorch_tanh"),
        )

    def small(self, name: str) -> torch.Tensor:
        return torch.from_numpy(self.read(name).astype(np.float32, copy=False))

    def layer(self, index: int) -> dict[str, torch.Tensor]:
        prefix = f"layer.{index}."
        w = {n[len(prefix) :]: self.small(n) for n in self.entries if n.startswith(prefix)}
        if self.bf16:
            w = {n: t.bfloat16() if n.rsplit(".", 1)[0] in MATRICES else t for n, t in w.items()}
        return quantize_layer(w) if self.int8 else fuse_qkv(w)

    def layer_bytes(self, index: int) -> int:
        return self.bytes_under(f"layer.{index}.")


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

    def packed(self, ids: list[list[int]], types: list[list[int]]) -> torch.Tensor:
        """The pairs' token rows end to end, [sum of lengths, d] (packed.py)."""
        flat = [t for pair in ids for t in pair]
        positions = torch.cat([torch.arange(len(pair)) for pair in ids])
        kinds = torch.tensor([t for pair in types for t in pair])
        h = self.rows(flat) + self.position[positions] + self.types[kinds]
        return F.layer_norm(h, h.shape[-1:], *self.norm, self.eps)


MATRICES = (
    "attention.self.query", "attention.self.key", "attention.self.value",
    "attention.output.dense", "intermediate.dense", "output.dense",
)  # fmt: skip


def native_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 natively (AVX512-BF16 or AMX); elsewhere a bfloat16
    product is emulated and slower than float32."""
    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def quantize_layer(w: dict[str, torch.Tensor]) -> dict:
    """The layer with its six matrices in int8 (symmetric, one scale per output row), packed for
    torch's dynamically quantised linear: activations are quantised per call, the product runs
    in int8 (VNNI where the CPU has it). A quarter of the bytes; norms and biases stay float32.
    Bench-only: it moves the top-5 (bench/results/cross_pruned.json)."""
    out = dict(w)
    for name in MATRICES:
        weight = out.pop(f"{name}.weight")
        scale = (weight.abs().amax(1) / 127).clamp(min=1e-12).double()
        zero = torch.zeros(len(scale), dtype=torch.long)
        q = torch.quantize_per_channel(weight, scale, zero, 0, torch.qint8)
        out[f"{name}.packed"] = torch.ops.quantized.linear_prepack(q, out.pop(f"{name}.bias"))
    return out


def layer(w: dict[str, torch.Tensor], arch: BertArch, h: torch.Tensor, mask: torch.Tensor):
    """One encoder layer (post-norm). h: [B, T, d]; mask: [B, T] True on real tokens."""
    b, t, d = h.shape

    def heads(x: torch.Tensor) -> torch.Tensor:
        return x.view(b, t, arch.n_head, d // arch.n_head).transpose(1, 2)

    q, k, v = (heads(x) for x in qkv(w, h))
    attn = F.scaled_dot_product_attention(q, k, v, attn_mask=mask[:, None, None, :])
    out = project(w, "attention.output.dense", attn.transpose(1, 2).reshape(b, t, d))
    ln = (w["attention.output.LayerNorm.weight"], w["attention.output.LayerNorm.bias"])
    h = F.layer_norm(h + out, (d,), *ln, arch.eps)
    ln = (w["output.LayerNorm.weight"], w["output.LayerNorm.bias"])
    return F.layer_norm(h + feed_forward(w, arch, h), (d,), *ln, arch.eps)


QKV = "attention.self.qkv"


def fuse_qkv(w: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The query, key and value matrices (and biases) stacked as one [3d, d] `QKV`: one
    product reads (and, in bfloat16, converts) the layer's input once instead of three times."""
    out = dict(w)
    for part in ("weight", "bias"):
        names = [f"attention.self.{n}.{part}" for n in ("query", "key", "value")]
        out[f"{QKV}.{part}"] = torch.cat([out.pop(n) for n in names])
    return out


def qkv(w: dict, h: torch.Tensor, q_rows: torch.Tensor | None = None):
    """Query, key and value of h (float32); with `q_rows` the query of those rows only."""
    q_in = h if q_rows is None else q_rows
    if f"{QKV}.weight" not in w:  # int8 layers keep the three matrices
        names = ("attention.self.key", "attention.self.value")
        return project(w, "attention.self.query", q_in), *(project(w, n, h) for n in names)
    weight, bias = w[f"{QKV}.weight"], w[f"{QKV}.bias"]
    if q_rows is None:
        return _linear(h, weight, bias).chunk(3, dim=-1)
    d = h.shape[-1]
    k, v = _linear(h, weight[d:], bias[d:]).chunk(2, dim=-1)
    return _linear(q_rows, weight[:d], bias[:d]), k, v


def feed_forward(w: dict, arch: BertArch, x: torch.Tensor) -> torch.Tensor:
    """gelu(x W1 + b1) W2 + b2 (bf16.feed_forward with bfloat16 matrices)."""
    gelu = "tanh" if arch.gelu_tanh else "none"
    w1 = w.get("intermediate.dense.weight")
    if w1 is not None and w1.dtype == torch.bfloat16:
        names = ("intermediate.dense.bias", "output.dense.weight", "output.dense.bias")
        return bf16.feed_forward(x, w1, *(w[n] for n in names), gelu)
    y = F.gelu(project(w, "intermediate.dense", x), approximate=gelu)
    return project(w, "output.dense", y)


def project(w: dict, name: str, x: torch.Tensor) -> torch.Tensor:
    """x through the layer's linear `name` (float32, bfloat16 or int8 matrix); float32 out."""
    packed = w.get(f"{name}.packed")
    if packed is not None:
        return torch.ops.quantized.linear_dynamic(x, packed, reduce_range=REDUCE_RANGE)
    return _linear(x, w[f"{name}.weight"], w[f"{name}.bias"])


def _linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    if weight.dtype == torch.bfloat16:  # the product in bfloat16, the rest in float32
        return bf16.linear(x, weight, bias)
    return F.linear(x, weight, bias)


class Head:
    """The classifier on [CLS]: pooler (dense + tanh) then the one-logit linear layer. Applied
    to any layer's [CLS] it gives that layer's provisional score."""

    def __init__(self, weights: BertFile) -> None:
        self.pooler = (weights.small("pooler.dense.weight"), weights.small("pooler.dense.bias"))
        self.out = (weights.small("classifier.weight"), weights.small("classifier.bias"))

    def __call__(self, cls: torch.Tensor) -> torch.Tensor:
        """One logit per [CLS] row of `cls` [b, d]."""
        pooled = torch.tanh(F.linear(cls, *self.pooler))
        return F.linear(pooled, *self.out)[:, 0]
