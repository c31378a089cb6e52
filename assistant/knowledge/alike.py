"""Chunks nearly alike across a mailbox: a campaign's mails, a newsletter's weekly template, a
resent or forwarded mail. The night's coverage plan (precompute/coverage.py) plans one chunk of
each group and learns from a group's senders which mail went out to many.

A chunk's signature is PERMUTATIONS minimum hashes of its word shingles (the words distinct.py
compares: the body after the header line; a short body is one shingle of the whole text's
words, so "Thanks!" from two people stays two texts, as distinct.py has it). Two signatures
agree in about as many positions as the Jaccard similarity of the two shingle sets (MinHash).
Chunks whose signatures are equal on a whole band of ROWS positions are candidates; a candidate
joins a group when the signatures agree in at least ALIKE of all positions. Finding the groups
is one pass over the texts and a sort per band, with no comparison of all pairs.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

from assistant.knowledge.distinct import SHINGLE, compared_words

PERMUTATIONS = 32
ROWS = 4  # positions per band: 8 bands find a pair alike at 0.8 with p ≈ 0.98, at 0.4 ≈ 0.18
ALIKE = 0.6  # share of equal positions (estimated Jaccard) that makes two chunks alike
_SEED = 47
_MASK = np.uint64(2**64 - 1)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: every bit of the input reaches every bit of the output."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


class _Vocabulary(dict):
    """A word's hash, computed once: crc32 + 1 (0 stands for no word)."""

    def __missing__(self, word: str) -> int:
        self[word] = code = zlib.crc32(word.encode()) + 1
        return code


def _shingle_hashes(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Every text's shingle hashes, concatenated, and each text's count of them (0 for a text
    without words). A word is hashed once (crc32); a shingle's hash is made from its words'."""
    vocabulary = _Vocabulary()
    codes: list[int] = []
    lengths = np.zeros(len(texts), dtype=np.int64)
    for i, text in enumerate(texts):
        words, short = compared_words(text)
        if short and words:  # one shingle: alike only to the same words, as in distinct.py
            words = (" ".join(words),)
        codes += map(vocabulary.__getitem__, words)
        lengths[i] = len(words)
    words = np.array(codes, dtype=np.uint64)
    ends = np.cumsum(lengths)
    # a shingle of SHINGLE words starts at every word with SHINGLE - 1 more of its own text;
    # a shorter text is one shingle of all its words (zeros stand in for the missing ones)
    n = np.minimum(lengths, SHINGLE)
    counts = np.where(lengths > 0, lengths - n + 1, 0)
    first = np.repeat(ends - lengths, counts) + _ranks(counts)
    width = np.repeat(n, counts)
    value = np.zeros(len(first), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for k in range(SHINGLE):
            word = np.where(k < width, words[np.minimum(first + k, len(words) - 1)], 0)
            value = _mix(value ^ word.astype(np.uint64))
    return value, counts


def _ranks(counts: np.ndarray) -> np.ndarray:
    """0, 1, …, c − 1 for each count c, concatenated."""
    total = int(counts.sum())
    return np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)


def signatures(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(signatures, has_words): one row of PERMUTATIONS minimum hashes per text; a text without
    words has no signature (its row is left as the largest value, and has_words is False)."""
    values, counts = _shingle_hashes(texts)
    out = np.full((len(texts), PERMUTATIONS), _MASK, dtype=np.uint64)
    has = counts > 0
    if not has.any():
        return out, has
    starts = np.concatenate(([0], np.cumsum(counts[has])[:-1]))
    rng = np.random.default_rng(_SEED)
    salts = rng.integers(0, 2**63, PERMUTATIONS, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for p, salt in enumerate(salts):
            out[has, p] = np.minimum.reduceat(_mix(values ^ salt), starts)
    return out, has


def groups(texts: Sequence[str]) -> list[list[int]]:
    """The groups (two or more) of nearly alike texts, as positions in `texts`, each in order."""
    sig, has = signatures(texts)
    rows = np.flatnonzero(has)
    parent = {int(i): int(i) for i in rows}

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for lead, i in _candidates(sig[rows]):
        a, b = root(int(rows[lead])), root(int(rows[i]))
        if a != b:
            parent[max(a, b)] = min(a, b)
    found: dict[int, list[int]] = {}
    for i in parent:
        found.setdefault(root(i), []).append(i)
    return [sorted(g) for g in found.values() if len(g) > 1]


def _candidates(sig: np.ndarray) -> list[tuple[int, int]]:
    """(first of its bucket, member) for each row whose band equals an earlier row's and whose
    signature agrees with that row's in ALIKE of the positions."""
    pairs: list[tuple[int, int]] = []
    n = len(sig)
    with np.errstate(over="ignore"):
        for start in range(0, PERMUTATIONS, ROWS):
            key = sig[:, start] * np.uint64(0x9E3779B97F4A7C15)
            for p in range(start + 1, start + ROWS):
                key = _mix(key ^ sig[:, p])
            _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
            lead = first[inverse.ravel()]
            joins = ((sig == sig[lead]).mean(axis=1) >= ALIKE) & (lead != np.arange(n))
            pairs += zip(lead[joins].tolist(), np.flatnonzero(joins).tolist(), strict=True)
    return pairs
