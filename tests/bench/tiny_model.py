"""A tiny random decoder (llama or gemma3 layout) saved as the torch reranker's weight file, and a
word-hash tokenizer: exercises the pruned forward's logic without a real model."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
from safetensors.numpy import save_file

from bench.ql.arch import Arch

VOCAB = 97


def tiny_arch(name: str = "llama", n_layers: int = 6) -> Arch:
    gemma = name == "gemma3"
    return Arch(
        name=name, n_layers=n_layers, d_model=32, n_head=4, n_head_kv=2, head_dim=8,
        eps=1e-6, rope_base=10000.0, rope_base_local=100.0,
        sliding_window=6 if gemma else 0, swa_period=3 if gemma else 0, neox=gemma,
        embed_scale=32**0.5 if gemma else 1.0, gelu=gemma, qk_norm=gemma, sandwich_norm=gemma,
    )  # fmt: skip


def write_tiny(path: Path, arch: Arch, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    d, hd, ff = arch.d_model, arch.head_dim, 3 * arch.d_model

    def mat(rows: int, cols: int) -> np.ndarray:
        return (rng.standard_normal((rows, cols)) / np.sqrt(cols)).astype(np.float32)

    def norm(n: int) -> np.ndarray:
        return (1 + 0.1 * rng.standard_normal(n)).astype(np.float32)

    tensors = {
        "token_embd.weight": rng.standard_normal((VOCAB, d)).astype(np.float16),
        "output_norm.weight": norm(d),
    }
    for i in range(arch.n_layers):
        layer = {
            "attn_norm": norm(d), "ffn_norm": norm(d),
            "attn_q": mat(arch.n_head * hd, d), "attn_k": mat(arch.n_head_kv * hd, d),
            "attn_v": mat(arch.n_head_kv * hd, d), "attn_output": mat(d, arch.n_head * hd),
            "ffn_gate": mat(ff, d), "ffn_up": mat(ff, d), "ffn_down": mat(d, ff),
        }  # fmt: skip
        if arch.qk_norm:
            layer |= {"attn_q_norm": norm(hd), "attn_k_norm": norm(hd)}
        if arch.sandwich_norm:
            layer |= {"post_attention_norm": norm(d), "post_ffw_norm": norm(d)}
        tensors |= {f"blk.{i}.{name}.weight": t for name, t in layer.items()}
    save_file(tensors, str(path), metadata={"arch": json.dumps(asdict(arch))})
    return path


def tiny_tokenize(text: str, first: bool = False) -> list[int]:
    ids = [int(hashlib.sha1(w.encode()).hexdigest(), 16) % (VOCAB - 1) + 1 for w in text.split()]
    return ([0] if first else []) + ids
