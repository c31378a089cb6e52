"""Train the test cross-encoder: MiniLM (the shipped all-MiniLM-L6-v2 weights, a fresh
one-logit head) on inverse-cloze pairs of the DL19 passages, no labels.

    python bench/studies/train_cross_encoder.py [--queries 600] [--out DIR]

A pseudo-question is one sentence of a passage; its positive is the passage without that
sentence, its negatives the BM25 best other passage for it and a random one. Trained listwise
(softmax over the group), two epochs, sequences ≤ 128 tokens. Its quality is not the point (the
issue's probe: label-free data at this scale does not beat the bi-encoder it starts from); it is
a real cross-encoder for the pruning and loading mechanics. Saved outside the repository into
DEFAULT_OUT, which bench/studies/cross_pruned.py reads; writes
bench/results/train_cross_encoder.json.
"""

from __future__ import annotations

import os
import sys

os.environ["HF_HUB_OFFLINE"] = "1"

# ruff: noqa: E402
import argparse
import random
import re
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

from _common import default_eval_dir, load_dl19, log, print_table, write_results
from rank_bm25 import BM25Okapi

from assistant.knowledge.embeddings import default_embedding_model

DEFAULT_OUT = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / (
    "assistant-bench/cross-minilm-ict"
)
GROUP = 3  # positive, BM25 negative, random negative


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    p.add_argument("--queries", type=int, default=600, help="pseudo-questions (× 3 pairs)")
    p.add_argument("--batch", type=int, default=8, help="questions per step")
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    return p.parse_args()


def sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if len(s.split()) >= 5]


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def make_groups(passages: list[str], n: int, rng: random.Random) -> list[tuple[str, list[str]]]:
    """(pseudo-question, [positive, BM25 negative, random negative])."""
    bm25 = BM25Okapi([words(p) for p in passages])
    usable = [i for i, p in enumerate(passages) if len(sentences(p)) >= 2]
    groups = []
    for i in rng.sample(usable, min(n, len(usable))):
        parts = sentences(passages[i])
        j = rng.randrange(len(parts))
        question = parts[j]
        positive = " ".join(parts[:j] + parts[j + 1 :])
        scores = bm25.get_scores(words(question))
        scores[i] = -np.inf
        hard = passages[int(np.argmax(scores))]
        easy = passages[rng.choice([k for k in range(len(passages)) if k != i])]
        groups.append((question, [positive, hard, easy]))
    return groups


def train(groups, args) -> tuple[object, list[float]]:
    from sentence_transformers import CrossEncoder

    torch.manual_seed(args.seed)
    model = CrossEncoder(str(default_embedding_model()), num_labels=1, max_length=args.max_length)
    net, tokenizer = model.model, model.tokenizer
    net.train()
    optim = torch.optim.AdamW(net.parameters(), lr=args.lr)
    losses = []
    starts = [s for _ in range(args.epochs) for s in range(0, len(groups), args.batch)]
    for step, start in enumerate(starts, 1):
        batch = groups[start : start + args.batch]
        pairs = [(q, p) for q, ps in batch for p in ps]
        enc = tokenizer(
            [q for q, _ in pairs], [p for _, p in pairs], truncation=True,
            max_length=args.max_length, padding=True, return_tensors="pt",
        )  # fmt: skip
        logits = net(**enc).logits.view(len(batch), GROUP)
        loss = torch.nn.functional.cross_entropy(logits, torch.zeros(len(batch), dtype=torch.long))
        optim.zero_grad()
        loss.backward()
        optim.step()
        losses.append(loss.item())
        if step % 10 == 0:
            log(f"step {step}: loss {np.mean(losses[-10:]):.3f}")
    net.eval()
    return model, losses


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.threads)
    rng = random.Random(args.seed)
    passages = [text for _, text in load_dl19(args.eval_dir).passages]
    t0 = time.perf_counter()
    groups = make_groups(passages, args.queries, rng)
    pairs_s = time.perf_counter() - t0
    log(f"{len(groups)} inverse-cloze groups ({len(groups) * GROUP} pairs) in {pairs_s:.0f}s")
    t0 = time.perf_counter()
    model, losses = train(groups, args)
    train_s = time.perf_counter() - t0
    args.out.mkdir(parents=True, exist_ok=True)
    model.save(str(args.out))
    first, last = float(np.mean(losses[:10])), float(np.mean(losses[-10:]))
    print_table(
        "Test cross-encoder (MiniLM, inverse cloze on DL19 passages)",
        ["pairs", "steps", "loss first 10", "loss last 10", "train s"],
        [[len(groups) * GROUP, len(losses), first, last, train_s]],
        note=f"saved into {args.out}",
        left=0,
    )
    data = {"pairs": len(groups) * GROUP, "steps": len(losses), "loss_first10": first,
            "loss_last10": last, "train_seconds": train_s, "pairs_seconds": pairs_s}  # fmt: skip
    write_results("train_cross_encoder", data, {k: str(v) for k, v in vars(args).items()})


if __name__ == "__main__":
    main()
