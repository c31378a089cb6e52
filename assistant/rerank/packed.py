"""The cross-encoder's forward on packed token rows: the pairs of a group laid end to end as one
[sum of lengths, d] matrix, no padding. The row-wise parts of a layer (projections, norms, the
feed-forward) run on the real tokens only; attention runs per pair, without a mask (a pair
only attends to its own tokens, as the padded forward's mask makes it). The same function as
bert.layer on the real tokens, in fewer operations.

In the last layer only [CLS] feeds the head: keys and values are computed for every token,
the query, the attention output, the feed-forward and the norms only for each pair's [CLS]
row (`cls_only`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import accumulate

import torch
import torch.nn.functional as F

from assistant.rerank.bert import BertArch, feed_forward, project, qkv


@dataclass
class Packed:
    """A group of pairs: `ids` (candidate indices), their token counts, their rows."""

    ids: list[int]
    lengths: list[int]
    h: torch.Tensor  # [sum(lengths), d]; after a cls_only layer [len(ids), d]
    cls_only: bool = False
    starts: list[int] = field(init=False)

    def __post_init__(self) -> None:
        self.starts = [0, *accumulate(self.lengths)][:-1]

    def forward(self, w: dict, arch: BertArch, last: bool) -> None:
        """One layer; in the `last` only [CLS] rows are kept (all the head reads)."""
        self.h = packed_layer(w, arch, self.h, self.lengths, cls_only=last)
        self.cls_only = last

    def cls(self) -> torch.Tensor:
        """Each pair's [CLS] row, [len(ids), d]."""
        return self.h if self.cls_only else self.h[self.starts]

    def keep(self, wanted: set[int]) -> Packed | None:
        rows = [r for r, i in enumerate(self.ids) if i in wanted]
        if len(rows) == len(self.ids):
            return self
        if not rows:
            return None
        index = torch.cat(
            [torch.arange(self.starts[r], self.starts[r] + self.lengths[r]) for r in rows]
        )
        return Packed([self.ids[r] for r in rows], [self.lengths[r] for r in rows], self.h[index])


def groups(lengths: list[int], order: list[int], max_rows: int) -> list[list[int]]:
    """Candidates in groups of at most `max_rows` token rows, first fit in `order` (longest
    first packs the groups full; bf16.py's blocks then pad little). A pair longer than
    `max_rows` is a group alone."""
    out: list[list[int]] = []
    rows: list[int] = []
    for i in order:
        fits = next((g for g, r in enumerate(rows) if r + lengths[i] <= max_rows), None)
        if fits is None:
            out.append([i])
            rows.append(lengths[i])
        else:
            out[fits].append(i)
            rows[fits] += lengths[i]
    return out


def packed_layer(
    w: dict, arch: BertArch, h: torch.Tensor, lengths: list[int], cls_only: bool = False
) -> torch.Tensor:
    """One encoder layer (post-norm) on packed rows h [sum(lengths), d]; returns the same
    shape, or with `cls_only` each pair's [CLS] row only ([len(lengths), d])."""
    starts = [0, *accumulate(lengths)][:-1]
    d = h.shape[1]
    rows = h[starts] if cls_only else h
    attn = _attention(
        *qkv(w, h, rows if cls_only else None), starts, lengths, arch.n_head, cls_only
    )
    out = project(w, "attention.output.dense", attn)
    del attn  # each activation freed as soon as it is used: the feed-forward's peak is alone
    ln = (w["attention.output.LayerNorm.weight"], w["attention.output.LayerNorm.bias"])
    x = F.layer_norm(rows + out, (d,), *ln, arch.eps)
    del out
    ln = (w["output.LayerNorm.weight"], w["output.LayerNorm.bias"])
    return F.layer_norm(x + feed_forward(w, arch, x), (d,), *ln, arch.eps)


def _attention(q, k, v, starts, lengths, n_head: int, cls_only: bool) -> torch.Tensor:
    """Per pair, unmasked: q [rows, d] (all tokens, or one [CLS] row per pair), k, v [n, d]."""
    out = torch.empty_like(q)
    d = k.shape[1]

    def heads(x: torch.Tensor) -> torch.Tensor:
        return x.reshape(1, -1, n_head, d // n_head).transpose(1, 2)  # 4-D: the flash kernel

    for r, (s, n) in enumerate(zip(starts, lengths, strict=True)):
        rows = slice(r, r + 1) if cls_only else slice(s, s + n)
        a = F.scaled_dot_product_attention(heads(q[rows]), heads(k[s : s + n]), heads(v[s : s + n]))
        out[rows] = a[0].transpose(0, 1).reshape(-1, d)
    return out
