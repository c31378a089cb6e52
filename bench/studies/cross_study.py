"""Where the test cross-encoder's ranking forms (bench/studies/cross_pruned.py): each layer's [CLS]
through the classifier head (or per-layer probes fitted without labels to the final logits),
per-layer agreement with the final ranking, and two pruning schedules calibrated on half the
queries for a top-k overlap target and replayed on the other half: the CV + k-means policy
(policy.Pruner) and a rank cut (keep the provisional top m after each check)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

from _common import log, mean  # noqa: E402
from pruning import calibrate, calibrate_cuts, rank_cut, replay, top_k_overlap  # noqa: E402

from assistant.rerank.policy import Pruner  # noqa: E402

GRID = (0.0, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0)


def states(args, rows: list[dict]):
    """Per query: each layer's [CLS] of every candidate, and the final logits (one unpruned
    forward). Provisional scores from the head or from probes are computed from these."""
    import torch

    from assistant.rerank.bert import native_bf16
    from assistant.rerank.grating import CrossPruned

    torch.set_num_threads(args.threads)
    engine = CrossPruned(str(args.model), args.max_length, bf16=native_bf16(), packed_rows=1024)
    out = []
    for n, row in enumerate(rows, 1):
        cls, final = engine.layer_states(row["text"], row["passages"])
        out.append(([c.numpy() for c in cls], final.numpy()))
        if n % 10 == 0:
            log(f"layer states: {n}/{len(rows)}")
    return engine, out


def provisional(engine, recorded, probes=None) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per query: [layers, candidates] provisional logits and the final logits."""
    import torch

    out = []
    for cls, final in recorded:
        rows = []
        for layer, x in enumerate(cls):
            t = torch.from_numpy(x)
            score = probes.score(layer, t) if probes else engine.head(t)
            rows.append(score.numpy())
        out.append((np.array(rows), final))
    return out


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def agreement(traces, k: int) -> dict[int, dict[str, float]]:
    """Per layer (1-based): Spearman ρ of provisional with final, top-k overlap, and the share
    of the final top-k inside the provisional top-2k."""
    from scipy.stats import spearmanr

    out = {}
    for layer in range(len(traces[0][0])):
        rho, over, recall = [], [], []
        for rows, final in traces:
            ref = np.argsort(-final, kind="stable").tolist()
            prov = np.argsort(-rows[layer], kind="stable").tolist()
            rho.append(spearmanr(rows[layer], final)[0])
            over.append(top_k_overlap(prov, ref, k))
            recall.append(len(set(ref[:k]) & set(prov[: 2 * k])) / k)
        out[layer + 1] = {"spearman": mean(rho), f"top{k}_overlap": mean(over),
                          f"top{k}_in_top{2 * k}": mean(recall)}  # fmt: skip
    return out


def layer_share(trace: np.ndarray, k: int, threshold: float, checks: list[int], n: int) -> float:
    """The share of candidate-layer evaluations a pruned run computes (replayed)."""
    pruner, done = Pruner(trace.shape[1], k, threshold), 0
    last = 0
    for row, layer in zip(trace, checks, strict=True):
        done += len(pruner.active) * (layer + 1 - last)
        last = layer + 1
        pruner.step(row[pruner.active])
        if pruner.finished:
            return done / (trace.shape[1] * n)
    return (done + len(pruner.active) * (n - last)) / (trace.shape[1] * n)


def cut_share(keep: list[int], checks: list[int], n_cands: int, n: int) -> float:
    """The share of candidate-layer evaluations a rank-cut schedule computes."""
    done, last, running = 0, 0, n_cands
    for layer, m in zip(checks, keep, strict=True):
        done += running * (layer + 1 - last)
        last, running = layer + 1, m
    return (done + running * (n - last)) / (n_cands * n)


def cuts(traces, checks: list[int], k: int, target: float, n: int) -> dict[str, Any]:
    """The rank-cut schedule calibrated on the first half; its overlap and share on the second."""
    half = len(traces) // 2
    replays = [(rows[checks], final) for rows, final in traces]
    keep = calibrate_cuts(replays[:half], k, target)
    over = [
        top_k_overlap(rank_cut(t, f, keep), np.argsort(-f, kind="stable").tolist(), k)
        for t, f in replays[half:]
    ]
    share = cut_share(keep, checks, len(traces[0][1]), n)
    return {"keep": keep, "held_out_overlap": mean(over), "layer_share": share}


def calibrated(traces, checks: list[int], k: int, target: float, n: int) -> dict[str, float]:
    """The threshold calibrated on the first half; its replayed overlap and layer share on the
    second."""
    half = len(traces) // 2
    replays = [(sigmoid(rows[checks]), sigmoid(final)) for rows, final in traces]
    threshold = calibrate(replays[:half], k, target, GRID)
    held = replays[half:]
    over = [
        top_k_overlap(replay(t, f, k, threshold), np.argsort(-f, kind="stable").tolist(), k)
        for t, f in held
    ]
    share = [layer_share(t, k, threshold, checks, n) for t, _ in held] if held else []
    return {"threshold": threshold, "held_out_overlap": mean(over), "layer_share": mean(share)}


def study(args, engine, recorded) -> tuple[dict[str, Any], Any]:
    """Head vs probes (fitted on the first half's pairs, unlabelled): agreement on the second
    half, calibration; returns the figures and the probes if they prune more."""
    from assistant.rerank.probes import fit

    half = len(recorded) // 2
    n_layers = engine.arch.n_layers
    checks = engine.default_checks()
    layers = range(n_layers - 1)
    probes = fit(
        {ly: np.concatenate([cls[ly] for cls, _ in recorded[:half]]) for ly in layers},
        np.concatenate([final for _, final in recorded[:half]]),
    )
    out = {}
    for name, p in (("head", None), ("probes", probes)):
        traces = provisional(engine, recorded, p)
        out[name] = {
            "layer_agreement_held_out": agreement(traces[half:], args.k),
            **calibrated(traces, checks, args.k, args.target, n_layers),
            "rank_cut": cuts(traces, checks, args.k, args.target, n_layers),
        }
    best = min(out, key=lambda m: (out[m]["layer_share"], m != "head"))
    return out | {"used": best}, probes if best == "probes" else None
