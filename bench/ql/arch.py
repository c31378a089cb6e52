"""The architecture parameters the torch forward needs, read from GGUF metadata.

Two families are supported, the ones the reranker ships with: `llama` (SmolLM2) and `gemma3`.
Conventions follow llama.cpp, whose GGUF files these are: llama Q/K weights are permuted for
rotary embedding over adjacent pairs; gemma3 rotates halves (NeoX), has its norms' +1 folded
into the weights, and alternates five sliding-window layers (rope base 10k) with one global.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SUPPORTED = ("llama", "gemma3")


class UnsupportedModel(ValueError):
    """The GGUF's architecture has no torch forward here (full QL on llama.cpp still works)."""


@dataclass(frozen=True)
class Arch:
    name: str
    n_layers: int
    d_model: int
    n_head: int
    n_head_kv: int
    head_dim: int
    eps: float
    rope_base: float
    rope_base_local: float
    sliding_window: int  # 0: none
    swa_period: int  # every swa_period-th layer is global (gemma3: 6); 0: all global
    neox: bool  # rotary over halves (True) or adjacent pairs (False)
    embed_scale: float
    gelu: bool  # GEGLU (gemma) or SwiGLU (llama)
    qk_norm: bool
    sandwich_norm: bool  # gemma's post-attention / post-FFN norms

    def is_local(self, layer: int) -> bool:
        return bool(self.swa_period) and layer % self.swa_period < self.swa_period - 1


def read_arch(meta: Mapping[str, Any]) -> Arch:
    name = str(meta["general.architecture"])
    if name not in SUPPORTED:
        raise UnsupportedModel(
            f"pruned reranking supports {', '.join(SUPPORTED)} models, not {name!r}; "
            'use `rerank = "full"` for this model'
        )
    get = lambda key, default=None: meta.get(f"{name}.{key}", default)  # noqa: E731
    d_model, n_head = int(get("embedding_length")), int(get("attention.head_count"))
    head_dim = int(get("attention.key_length", d_model // n_head))
    gemma = name == "gemma3"
    return Arch(
        name=name,
        n_layers=int(get("block_count")),
        d_model=d_model,
        n_head=n_head,
        n_head_kv=int(get("attention.head_count_kv", n_head)),
        head_dim=head_dim,
        eps=float(get("attention.layer_norm_rms_epsilon")),
        rope_base=float(get("rope.freq_base", 10000.0)),
        rope_base_local=10000.0 if gemma else float(get("rope.freq_base", 10000.0)),
        sliding_window=int(get("attention.sliding_window", 0)) if gemma else 0,
        swa_period=6 if gemma else 0,
        neox=gemma,
        embed_scale=math.sqrt(d_model) if gemma else 1.0,
        gelu=gemma,
        qk_norm=gemma,
        sandwich_norm=gemma,
    )
