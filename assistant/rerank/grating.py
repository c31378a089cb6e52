"""Layer-wise pruned cross-encoder reranking (GRATING): every candidate advances one layer at a
time (monolithic forwarding, in chunks of the batch); at check layers the classifier head on
each running candidate's [CLS] gives a provisional score, and the Pruner (policy.py: CV + 1-D
k-means; accept, defer, drop) stops computing candidates whose place is decided.

Provisional scores come from the model's own head, not from a per-layer probe: a post-norm BERT's
every layer ends in a LayerNorm, so each layer's [CLS] lives in the scale the head was trained
on, and the head needs no labels to apply (bench/results/cross_pruned.json records how well each
layer's provisional order agrees with the final one). The policy sees sigmoid(logit): the CV of
raw logits, which sit around zero, says nothing about their spread.

Candidates run either in padded batches (`_Chunk`, bert.layer) or packed (packed.py: token
rows end to end without padding, the last layer on [CLS] only); both expose forward / cls /
keep, and the loop does not tell them apart.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from assistant.rerank.bert import BertArch, BertFile, Embeddings, Head, layer
from assistant.rerank.cross import check_folder
from assistant.rerank.packed import Packed, groups
from assistant.rerank.policy import PrunedRun, Pruner
from assistant.rerank.probes import Probes
from assistant.rerank.weights import EmbeddingRows, LayerWindow


@dataclass
class _Chunk:
    ids: list[int]  # candidate indices
    h: torch.Tensor  # [b, T, d]
    mask: torch.Tensor  # [b, T]

    def keep(self, wanted: set[int]) -> _Chunk | None:
        rows = [r for r, i in enumerate(self.ids) if i in wanted]
        if len(rows) == len(self.ids):
            return self
        if not rows:
            return None
        idx = torch.tensor(rows)
        width = int(self.mask[idx].sum(1).max())  # drop the padding the longest left behind
        return _Chunk([self.ids[r] for r in rows], self.h[idx, :width], self.mask[idx, :width])

    def forward(self, w: dict, arch: BertArch, last: bool) -> None:
        self.h = layer(w, arch, self.h, self.mask)

    def cls(self) -> torch.Tensor:
        return self.h[:, 0]


class CrossPruned:
    def __init__(
        self,
        folder: str,
        max_length: int = 256,
        resident_layers: int | None = None,
        chunk_size: int = 4,
        embed_rows: int = 4096,
        probes: Probes | None = None,
        bf16: bool = False,
        int8: bool = False,
        preload: bool = True,
        packed_rows: int = 0,
    ) -> None:
        """`resident_layers`: layers kept loaded between questions (None: all); the others
        stream through a two-layer window read ahead while the current one computes.
        `probes`: per-layer provisional scorers (probes.py) where the head is not used.
        `bf16`: the layers' matrices and their products in bfloat16 (norms, softmax, the
        embeddings and the head stay float32): half the layer bytes and, on a CPU that
        multiplies bfloat16 natively (bert.native_bf16), less time at the same top-5
        (bench/results/cross_pruned.json); the loader turns it on only there.
        `int8`: the layers' matrices in int8 (bert.quantize_layer), quantised as they load;
        bench-only (it costs too much top-5 overlap: bench/results/cross_pruned.json).
        `preload`: read the resident layers now, or as the first forward reaches each.
        `packed_rows`: 0: candidates in padded batches of `chunk_size`; else the packed forward
        (packed.py: no padding, the last layer on [CLS] rows only) in groups of at most this
        many token rows."""
        from transformers import AutoTokenizer

        path = Path(folder).expanduser()
        self.weights = BertFile(path, check_folder(str(path)))
        self.weights.bf16, self.weights.int8 = bf16, int8
        self.arch = self.weights.arch
        self.tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        self.max_length = max_length
        self.chunk_size = chunk_size
        self.packed_rows = packed_rows
        resident = self.arch.n_layers if resident_layers is None else resident_layers
        self.window = LayerWindow(self.weights, resident, preload)
        self.embed = Embeddings(self.weights, EmbeddingRows(self.weights, embed_rows, "word"))
        self.head = Head(self.weights)
        self.probes = probes

    def close(self) -> None:
        self.window.close()
        self.weights.close()

    def default_checks(self) -> list[int]:
        """Every layer after the first but the last: a check costs one head on b [CLS] rows."""
        return list(range(1, self.arch.n_layers - 1))

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
        """Rank `passages` for `query`; with threshold inf nothing is pruned (the full order).
        The run's scores are logits (final for the candidates that reached the last layer)."""
        pruner = Pruner(len(passages), k, threshold, exact_order)
        run = PrunedRun([], {})
        check_at = set(self.default_checks() if checks is None else checks)
        try:
            with torch.inference_mode():
                chunks = self._chunks(query, passages)
                for index in range(self.arch.n_layers):
                    if check is not None:
                        check()  # may raise (a background rerank stepping aside)
                    w = self.window.get(index)
                    last = index == self.arch.n_layers - 1
                    for c in chunks:
                        c.forward(w, self.arch, last)
                    run.candidate_layers += sum(len(c.ids) for c in chunks)
                    if last or (index in check_at and not pruner.settled):
                        chunks = self._check(run, pruner, chunks, index, last, len(passages))
                    if last or pruner.finished:
                        break
        finally:
            self.window.release()  # also when a check raised
        run.order = pruner.order()
        return run

    def _check(self, run, pruner: Pruner, chunks: list[_Chunk], index, last, n) -> list[_Chunk]:
        logits = self._provisional(chunks, None if last else index)
        run.scores.update(logits)
        row = torch.full((n,), math.nan, dtype=torch.float64)
        row[list(logits)] = torch.tensor(list(logits.values()), dtype=torch.float64)
        run.trace.append(row.numpy())
        run.check_layers.append(index)
        probs = {i: _sigmoid(s) for i, s in logits.items()}
        if last:
            pruner.scores.update(probs)
            return chunks
        pruner.step([probs[i] for i in pruner.active])
        keep = set(pruner.active)
        return [c for c in (c.keep(keep) for c in chunks) if c is not None]

    def _provisional(self, chunks: list[_Chunk], layer: int | None) -> dict[int, float]:
        """Logits from the head, or from the layer's probe where there is one (not after the
        last layer: there the head's logit is the final score)."""
        ids = [i for c in chunks for i in c.ids]
        if layer is not None and self.probes is not None and self.probes.has(layer):
            logits = torch.cat([self.probes.score(layer, c.cls()) for c in chunks]).tolist()
        else:
            logits = torch.cat([self.head(c.cls()) for c in chunks]).tolist()
        return dict(zip(ids, logits, strict=True))

    def layer_states(self, query: str, passages: Sequence[str]) -> tuple[list, torch.Tensor]:
        """Unpruned: each layer's [CLS] ([n, d], candidates in order) and the final logits."""
        states = []
        try:
            with torch.inference_mode():
                chunks = self._chunks(query, passages)
                order = torch.tensor([i for c in chunks for i in c.ids]).argsort()
                for index in range(self.arch.n_layers):
                    w = self.window.get(index)
                    for c in chunks:
                        c.forward(w, self.arch, index == self.arch.n_layers - 1)
                    states.append(torch.cat([c.cls() for c in chunks])[order])
                final = self.head(states[-1])
        finally:
            self.window.release()
        return states[:-1], final

    def _chunks(self, query: str, passages: Sequence[str]) -> list[_Chunk] | list[Packed]:
        """Batches of `chunk_size` (or packed groups), longest pairs together, embedded."""
        enc = self.tokenizer(
            [query] * len(passages), list(passages), truncation=True, max_length=self.max_length
        )
        lengths = [len(x) for x in enc["input_ids"]]
        order = sorted(range(len(passages)), key=lambda i: -lengths[i])
        if self.packed_rows:
            ids, types = enc["input_ids"], enc["token_type_ids"]
            return [
                Packed(g, [lengths[i] for i in g], self.embed.packed(
                    [ids[i] for i in g], [types[i] for i in g]))
                for g in groups(lengths, order, self.packed_rows)
            ]  # fmt: skip
        out = []
        for start in range(0, len(order), self.chunk_size):
            ids = order[start : start + self.chunk_size]
            width = lengths[ids[0]]
            tokens = torch.zeros(len(ids), width, dtype=torch.long)
            types = torch.zeros(len(ids), width, dtype=torch.long)
            for row, i in enumerate(ids):
                tokens[row, : lengths[i]] = torch.tensor(enc["input_ids"][i])
                types[row, : lengths[i]] = torch.tensor(enc["token_type_ids"][i])
            mask = torch.arange(width)[None, :] < torch.tensor([lengths[i] for i in ids])[:, None]
            out.append(_Chunk(ids, self.embed(tokens, types), mask))
        return out

    def precompute(self, passages: Sequence[str]) -> int:
        """Nothing to keep per document: question and passage are read together."""
        return 0


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x > -700 else 0.0
