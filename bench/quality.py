"""Answer quality against a reference answer: ROUGE-L F1 and "the expected strings are there".

ROUGE-L is the longest common subsequence of the two token lists (Lin, 2004), as F1 of its
precision and recall. It is written here (a dozen lines) rather than taken from `rouge-score`,
which is not installed and would bring nltk and absl-py with it; tokens follow that package's
default tokenizer: lower case, runs of ASCII letters and digits, no stemming.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

_TOKEN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence (one row of the DP table at a time)."""
    row = [0] * (len(b) + 1)
    for x in a:
        diagonal = 0
        for j, y in enumerate(b, 1):
            diagonal, row[j] = row[j], diagonal + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


def rouge_l(candidate: str, reference: str) -> float:
    """ROUGE-L F1 in [0, 1]; 0 when either side has no tokens."""
    cand, ref = tokens(candidate), tokens(reference)
    common = lcs_length(cand, ref)
    if not common:
        return 0.0
    precision, recall = common / len(cand), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def has_expected(answer: str, expected: Sequence[str]) -> bool | None:
    """Every expected string occurs in the answer (case- and space-insensitive);
    None when nothing is expected."""
    if not expected:
        return None
    text = " ".join(answer.lower().split())
    return all(" ".join(e.lower().split()) in text for e in expected)


def paired(pairs, key: str) -> np.ndarray:
    """[design, reference] values of `key` for each (design row, reference row) pair where
    both have one (a question without expected strings has no facts figure)."""
    values = [(r[key], x[key]) for r, x in pairs if r[key] is not None and x[key] is not None]
    return np.array(values, dtype=float).reshape(-1, 2)


def ratio_interval(pairs: np.ndarray, draws: int = 5000, seed: int = 0, stat=np.sum) -> list[float]:
    """Bootstrap 95% interval of stat(design) / stat(reference) (the sum, or `stat`: np.median
    for a ratio of p50s) over paired rows [design, reference] (one per question or run,
    resampled together): how far the ratio on this many rows can be told from 1."""
    rng = np.random.default_rng(seed)
    sums = stat(pairs[rng.integers(0, len(pairs), (draws, len(pairs)))], axis=1)
    ratios = sums[:, 0] / np.maximum(sums[:, 1], 1e-12)
    return [float(v) for v in np.percentile(ratios, [2.5, 97.5])]


def mcnemar_p(lost: int, gained: int) -> float:
    """Exact two-sided McNemar p for paired yes/no outcomes: `lost` and `gained` discordant."""
    n, k = lost + gained, min(lost, gained)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n) if n else 1.0
