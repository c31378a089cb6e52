"""The retired pruned query-likelihood reranker, kept for the benches that show why it is no
mode (its ranking forms only in the last layers: bench/results/rerank_quality.json,
"layer_agreement"). Layer-wise pruned QL scoring in torch (GRATING): every candidate advances one
layer at a time (monolithic forwarding, in chunks of the batch); at check layers the provisional
scores (final norm + LM head at the question positions) go to the Pruner, which accepts or drops
candidates; the weights stream through a two-layer window read ahead by a background thread."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from assistant.rerank.policy import PrunedRun, Pruner
from assistant.rerank.prompt import QLTokens
from assistant.rerank.weights import EmbeddingRows, LayerWindow
from bench.ql.forward import KV, prefix_layer, rms_norm, suffix_layer
from bench.ql.torch_kv import TorchDocKV
from bench.ql.weights import EMBED, WeightFile, head_blocks, head_name


@dataclass
class _Chunk:
    ids: list[int]
    plen: torch.Tensor
    prefix: torch.Tensor | None  # hidden states [b, P, d]; None with cached prefix K/V
    suffix: torch.Tensor  # [b, S, d]
    kv: list[KV] | None = None  # per layer, from the document KV cache

    def keep(self, wanted: set[int]) -> _Chunk | None:
        rows = [r for r, i in enumerate(self.ids) if i in wanted]
        if not rows:
            return None
        if len(rows) == len(self.ids):
            return self
        idx = torch.tensor(rows)
        kv = [(k[idx], v[idx]) for k, v in self.kv] if self.kv is not None else None
        prefix = self.prefix[idx] if self.prefix is not None else None
        ids = [self.ids[r] for r in rows]
        return _Chunk(ids, self.plen[idx], prefix, self.suffix[idx], kv)


class TorchQL:
    def __init__(
        self,
        weights: WeightFile,
        tokens: QLTokens,
        resident_layers: int = 0,
        chunk_size: int = 2,
        embed_rows: int = 1024,
        head_block: int = 2048,
        doc_kv: TorchDocKV | None = None,
    ) -> None:
        self.weights = weights
        self.arch = weights.arch
        self.tokens = tokens
        self.window = LayerWindow(weights, resident_layers)
        self.chunk_size = chunk_size
        self.head_block = head_block
        self.embed = EmbeddingRows(weights, embed_rows, EMBED)
        self.head_rows = EmbeddingRows(weights, embed_rows, head_name(weights))
        self.output_norm = weights.small("output_norm.weight")
        self.doc_kv = doc_kv

    def close(self) -> None:
        self.window.close()

    def rank(
        self,
        query: str,
        passages: Sequence[str],
        k: int,
        threshold: float = math.inf,
        exact_order: bool = False,
        checks: Sequence[int] | None = None,
        check: Callable[[], None] | None = None,
    ) -> PrunedRun:
        """Rank `passages` for `query`; with threshold inf nothing is pruned (the full order)."""
        suffix, n_question = self.tokens.suffix(query)
        targets = torch.tensor(suffix[len(suffix) - n_question :])
        chunks = self._chunks([self.tokens.prefix(p) for p in passages], suffix)
        pruner = Pruner(len(passages), k, threshold, exact_order)
        run = PrunedRun([], {})
        check_at = set(self.default_checks() if checks is None else checks)
        try:
            with torch.inference_mode():
                for layer in range(self.arch.n_layers):
                    if check is not None:
                        check()  # may raise (a background rerank stepping aside)
                    weights = self.window.get(layer)
                    chunks = [self._advance(c, weights, layer) for c in chunks]
                    run.candidate_layers += sum(len(c.ids) for c in chunks)
                    last = layer == self.arch.n_layers - 1
                    if last or (layer in check_at and not pruner.settled):
                        scores = self._provisional(chunks, targets, n_question)
                        self._record(run, layer, scores, len(passages))
                        if last:
                            pruner.scores.update(scores)
                            break
                        pruner.step([scores[i] for i in pruner.active])
                        keep = set(pruner.active)
                        chunks = [c for c in (c.keep(keep) for c in chunks) if c is not None]
                    if pruner.finished:
                        break
        finally:
            self.window.release()  # also when a check raised
        run.order, run.scores = pruner.order(), dict(pruner.scores)
        return run

    def default_checks(self) -> list[int]:
        return default_checks(self.arch.n_layers)

    @staticmethod
    def _record(run: PrunedRun, layer: int, scores: dict[int, float], n: int) -> None:
        row = np.full(n, np.nan)
        row[list(scores)] = list(scores.values())
        run.trace.append(row)
        run.check_layers.append(layer)

    def _embed(self, tokens: Sequence[int]) -> torch.Tensor:
        return self.embed(list(tokens)) * self.arch.embed_scale

    def _chunks(self, prefixes: list[list[int]], suffix: list[int]) -> list[_Chunk]:
        """Batches of `chunk_size`, longest prefixes together (less padding)."""
        order = sorted(range(len(prefixes)), key=lambda i: -len(prefixes[i]))
        suffix_h = self._embed(suffix)
        out = []
        for start in range(0, len(order), self.chunk_size):
            ids = order[start : start + self.chunk_size]
            plen = torch.tensor([len(prefixes[i]) for i in ids])
            kv = self._cached_kv([prefixes[i] for i in ids])
            prefix_h = None if kv is not None else self._padded([prefixes[i] for i in ids])
            out.append(_Chunk(ids, plen, prefix_h, suffix_h.expand(len(ids), -1, -1), kv))
        return out

    def _padded(self, prefixes: list[list[int]]) -> torch.Tensor:
        width = max(len(p) for p in prefixes)
        h = torch.zeros(len(prefixes), width, self.arch.d_model)
        for row, p in enumerate(prefixes):
            h[row, : len(p)] = self._embed(p)
        return h

    def _cached_kv(self, prefixes: list[list[int]]) -> list[KV] | None:
        """Per layer, the chunk's prefix K/V padded to its longest prefix; None unless every
        prefix is cached (run `precompute` first)."""
        if self.doc_kv is None:
            return None
        stored = [self.doc_kv.get(p) for p in prefixes]
        if any(s is None for s in stored):
            return None
        return [_pad_kv([s[layer] for s in stored]) for layer in range(self.arch.n_layers)]

    def _advance(self, chunk: _Chunk, weights, layer: int) -> _Chunk:
        if chunk.kv is not None:
            kv = (chunk.kv[layer][0].float(), chunk.kv[layer][1].float())
        else:
            chunk.prefix, kv = prefix_layer(weights, self.arch, layer, chunk.prefix, chunk.plen)
        chunk.suffix = suffix_layer(weights, self.arch, layer, chunk.suffix, chunk.plen, kv)
        return chunk

    def _provisional(self, chunks: list[_Chunk], targets: torch.Tensor, n_q: int) -> dict:
        """Mean log p(question token) per candidate from the current hidden states."""
        rows = torch.cat([c.suffix[:, -n_q - 1 : -1] for c in chunks])  # [N, n_q, d]
        x = rms_norm(rows, self.output_norm, self.arch.eps).reshape(-1, self.arch.d_model)
        lse = torch.full((x.shape[0],), -math.inf)
        for block in head_blocks(self.weights, self.head_block):
            lse = torch.logaddexp(lse, torch.logsumexp(torch.nn.functional.linear(x, block), dim=1))
        target = (x.view(-1, n_q, x.shape[1]) * self.head_rows(targets.tolist())).sum(-1)
        scores = (target - lse.view(-1, n_q)).mean(1).tolist()
        ids = [i for c in chunks for i in c.ids]
        return dict(zip(ids, scores, strict=True))

    def precompute(self, passages: Sequence[str]) -> int:
        """Compute and store the prefix K/V of passages not cached yet; returns how many."""
        if self.doc_kv is None:
            return 0
        prefixes = [self.tokens.prefix(p) for p in passages]
        missing = [p for p in prefixes if not self.doc_kv.has(p)]
        for start in range(0, len(missing), self.chunk_size):
            batch = missing[start : start + self.chunk_size]
            for prefix, layers in zip(batch, self._prefix_kv(batch), strict=True):
                self.doc_kv.put(prefix, layers)
        return len(missing)

    def _prefix_kv(self, prefixes: list[list[int]]) -> list[list[KV]]:
        plen = torch.tensor([len(p) for p in prefixes])
        h = self._padded(prefixes)
        per_layer = []
        with torch.inference_mode():
            for layer in range(self.arch.n_layers):
                h, kv = prefix_layer(self.window.get(layer), self.arch, layer, h, plen)
                per_layer.append(kv)
        self.window.release()
        return [
            [(k[row, :, :n], v[row, :, :n]) for k, v in per_layer]
            for row, n in enumerate(plen.tolist())
        ]


def default_checks(n_layers: int) -> list[int]:
    """Half, two thirds and five sixths of the depth: earlier scores are mostly noise, and each
    check costs an LM-head pass (262k rows for gemma)."""
    n = n_layers
    return sorted({n // 2, 2 * n // 3, 5 * n // 6} - {n - 1})


def _pad_kv(items: list[KV]) -> KV:
    """Stack per-candidate [H, P_i, D] K/V into [b, H, P, D], zero-padded on the right."""
    width = max(k.shape[1] for k, _ in items)

    def pad(t: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.pad(t, (0, 0, 0, width - t.shape[1]))

    return torch.stack([pad(k) for k, _ in items]), torch.stack([pad(v) for _, v in items])
