"""bfloat16 products in row blocks of two fixed sizes (bf16.py)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from assistant.rerank import bf16


@pytest.mark.parametrize("n", [1, 255, 256, 257, 700, 769, 1024, 1025, 1800, 5000])
def test_blocks_cover_the_rows_with_two_sizes_and_little_padding(n):
    spans = list(bf16.blocks(n))
    assert spans[0][0] == 0 and spans[-1][1] == n
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:], strict=False))  # contiguous, in order
    assert {size for _, _, size in spans} <= {bf16.BIG, bf16.SMALL}
    assert all(stop - start <= size for start, stop, size in spans)
    assert sum(size for *_, size in spans) - n < bf16.SMALL


def test_blocked_products_equal_one_product_on_all_rows():
    torch.manual_seed(0)
    x = torch.randn(3, 600, 64)  # 1800 rows: blocks of 1024 and of 256
    w1, b1 = torch.randn(96, 64).bfloat16(), torch.randn(96).bfloat16()
    w2, b2 = torch.randn(64, 96).bfloat16(), torch.randn(64).bfloat16()
    rows = x.reshape(-1, 64).bfloat16()
    expected = F.linear(rows, w1, b1).float().view(3, 600, 96)
    torch.testing.assert_close(bf16.linear(x, w1, b1), expected, atol=0.05, rtol=0.01)
    hidden = F.gelu(F.linear(rows, w1, b1).float()).bfloat16()
    expected = F.linear(hidden, w2, b2).float().view(3, 600, 64)
    torch.testing.assert_close(
        bf16.feed_forward(x, w1, b1, w2, b2, "none"), expected, atol=0.05, rtol=0.01
    )
