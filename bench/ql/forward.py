"""One decoder layer for a batch of QL prompts, split into the passage prefix and the question
suffix (instruction + question, the same tokens for every candidate).

The prefix attends to itself; the suffix attends to the prefix's keys and values and to itself.
So the prefix's per-layer K/V can come from a cache instead (document-side KV), and the suffix
computes the same thing either way. Prefixes are right-padded; `plen` holds each one's length.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from bench.ql.arch import Arch

Weights = dict[str, torch.Tensor]
KV = tuple[torch.Tensor, torch.Tensor]  # (keys after rotary, values): [B, H_kv, P, head_dim]


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def rotary(x: torch.Tensor, pos: torch.Tensor, base: float, neox: bool) -> torch.Tensor:
    """x: [B, H, T, D], pos: [B, T]. NeoX rotates (x_i, x_{i+D/2}); otherwise (x_2i, x_2i+1)."""
    dim = x.shape[-1]
    inv = base ** (-torch.arange(0, dim, 2, dtype=torch.float32) / dim)
    angle = pos[:, None, :, None].float() * inv  # [B, 1, T, D/2]
    cos, sin = angle.cos(), angle.sin()
    if neox:
        a, b = x[..., : dim // 2], x[..., dim // 2 :]
        return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)


def _linear(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """x @ weightᵀ in x's precision: weights are stored in float16 (half the window's memory)
    and widened one matrix at a time."""
    return F.linear(x, weight.to(x.dtype))


def _heads(x: torch.Tensor, n: int, dim: int) -> torch.Tensor:
    return x.view(x.shape[0], x.shape[1], n, dim).transpose(1, 2)


def _qkv(w: Weights, arch: Arch, layer: int, h: torch.Tensor, pos: torch.Tensor):
    x = rms_norm(h, w["attn_norm.weight"], arch.eps)
    q = _heads(_linear(x, w["attn_q.weight"]), arch.n_head, arch.head_dim)
    k = _heads(_linear(x, w["attn_k.weight"]), arch.n_head_kv, arch.head_dim)
    v = _heads(_linear(x, w["attn_v.weight"]), arch.n_head_kv, arch.head_dim)
    if arch.qk_norm:
        q = rms_norm(q, w["attn_q_norm.weight"], arch.eps)
        k = rms_norm(k, w["attn_k_norm.weight"], arch.eps)
    base = arch.rope_base_local if arch.is_local(layer) else arch.rope_base
    return rotary(q, pos, base, arch.neox), rotary(k, pos, base, arch.neox), v


def _attend(arch: Arch, q, k, v, mask: torch.Tensor) -> torch.Tensor:
    groups = arch.n_head // arch.n_head_kv
    k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask[:, None])
    return out.transpose(1, 2).flatten(2)


def _finish(w: Weights, arch: Arch, h: torch.Tensor, attn: torch.Tensor) -> torch.Tensor:
    """Output projection, residual, feed-forward, residual (gemma: with sandwich norms)."""
    out = _linear(attn, w["attn_output.weight"])
    if arch.sandwich_norm:
        out = rms_norm(out, w["post_attention_norm.weight"], arch.eps)
    h = h + out
    x = rms_norm(h, w["ffn_norm.weight"], arch.eps)
    gate = _linear(x, w["ffn_gate.weight"])
    act = F.gelu(gate, approximate="tanh") if arch.gelu else F.silu(gate)
    out = _linear(act * _linear(x, w["ffn_up.weight"]), w["ffn_down.weight"])
    if arch.sandwich_norm:
        out = rms_norm(out, w["post_ffw_norm.weight"], arch.eps)
    return h + out


def _mask(arch: Arch, layer: int, q_pos, k_pos, k_valid) -> torch.Tensor:
    """[B, Tq, Tk]: causal, valid keys only, within the sliding window on local layers."""
    mask = (k_pos[:, None, :] <= q_pos[:, :, None]) & k_valid[:, None, :]
    if arch.is_local(layer) and arch.sliding_window:
        mask &= q_pos[:, :, None] - k_pos[:, None, :] < arch.sliding_window
    return mask


def prefix_layer(
    w: Weights, arch: Arch, layer: int, h: torch.Tensor, plen: torch.Tensor
) -> tuple[torch.Tensor, KV]:
    """The prefix through one layer; returns its new hidden states and its K/V."""
    pos = torch.arange(h.shape[1])[None, :].expand(h.shape[0], -1)
    q, k, v = _qkv(w, arch, layer, h, pos)
    valid = pos < plen[:, None]
    attn = _attend(arch, q, k, v, _mask(arch, layer, pos, pos, valid))
    return _finish(w, arch, h, attn), (k, v)


def suffix_layer(
    w: Weights, arch: Arch, layer: int, h: torch.Tensor, plen: torch.Tensor, prefix_kv: KV
) -> torch.Tensor:
    """The suffix through one layer, attending to the prefix K/V and to itself."""
    n_prefix = prefix_kv[0].shape[2]
    pos = plen[:, None] + torch.arange(h.shape[1])[None, :]
    q, k, v = _qkv(w, arch, layer, h, pos)
    p_pos = torch.arange(n_prefix)[None, :].expand(h.shape[0], -1)
    k_pos = torch.cat([p_pos, pos], dim=1)
    valid = torch.cat([p_pos < plen[:, None], torch.ones_like(pos, dtype=torch.bool)], dim=1)
    keys = torch.cat([prefix_kv[0], k], dim=2)
    values = torch.cat([prefix_kv[1], v], dim=2)
    attn = _attend(arch, q, keys, values, _mask(arch, layer, pos, k_pos, valid))
    return _finish(w, arch, h, attn)
