"""bfloat16 products with float32 around them, in row blocks of a few fixed sizes.

oneDNN generates and keeps a kernel for every row count a bfloat16 product meets (one per
matrix shape and count), so over questions of any length the RSS grew with every new
count. A product here runs on blocks of BIG rows while more than BIG - SMALL remain, then on
blocks of SMALL, the last one zero-padded: two row counts per matrix shape, whatever the
input, and never SMALL or more padded rows. Blocks also bound the activations a product
holds at once (the feed-forward's wide intermediate lives one block at a time).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import torch
import torch.nn.functional as F

BIG, SMALL = 1024, 256  # the row counts a bfloat16 product runs on


def blocks(n: int) -> Iterator[tuple[int, int, int]]:
    """(start, stop, rows of the padded block) covering rows 0..n."""
    start = 0
    while start < n:
        size = BIG if n - start > BIG - SMALL else SMALL
        yield start, min(n, start + size), size
        start += size


def rowwise(x: torch.Tensor, width: int, fn: Callable[[torch.Tensor], torch.Tensor]):
    """fn (bfloat16 rows [size, k] → bfloat16 rows [size, width]) over x's rows in blocks;
    float32 out, shaped like x but `width` wide."""
    flat = x.reshape(-1, x.shape[-1])
    out = torch.empty(flat.shape[0], width)
    for start, stop, size in blocks(flat.shape[0]):
        rows = torch.empty(size, flat.shape[1], dtype=torch.bfloat16)
        rows[: stop - start] = flat[start:stop]  # converted and padded in one copy
        rows[stop - start :] = 0
        out[start:stop] = fn(rows)[: stop - start]
    return out.view(*x.shape[:-1], width)


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """x @ weight.T + bias, the product in bfloat16 (weight and bias bfloat16)."""
    return rowwise(x, weight.shape[0], lambda rows: F.linear(rows, weight, bias))


def feed_forward(x: torch.Tensor, w1, b1, w2, b2, gelu: str) -> torch.Tensor:
    """gelu(x W1 + b1) W2 + b2 with the intermediate in bfloat16: gelu of a bfloat16 tensor
    computes in float32 and rounds, the numbers a float32 gelu would give rounded before the
    second product, without float32 copies of the widest activation."""

    def block(rows: torch.Tensor) -> torch.Tensor:
        return F.linear(torch.ops.aten.gelu_(F.linear(rows, w1, b1), approximate=gelu), w2, b2)

    return rowwise(x, w2.shape[0], block)
