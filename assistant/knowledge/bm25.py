"""BM25 over chunks: rank-bm25's Okapi statistics, frozen into a sparse doc×term weight matrix.

rank-bm25 scores a query with a Python loop over every document per query term; here its idf and
length normalisation are computed once at build, so a query is one sparse column sum (milliseconds
at 100k chunks), and the matrix is saved next to the database so start-up only loads it.

The matrix is kept as its three compressed-column arrays (scipy's CSC layout and file format)
and summed with numpy alone: importing scipy.sparse was most of the third that every command's
imports lost (bench/results/cli_start.json).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
from rank_bm25 import BM25Okapi

from assistant.home import replace_atomically

FORMAT = 1
_WORD = re.compile(r"\w+", re.UNICODE)
STOPWORDS = frozenset(
    "a an and are as at be but by did do does for from had has have he her his how i if in into "
    "is it its me my of on or our she so that the their them then there these they this to was "
    "we were what when where which who whom why will with would you your".split()
)


def tokenize(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


class Columns:
    """A documents × terms matrix in compressed columns: term j's documents are
    `indices[indptr[j]:indptr[j + 1]]` (each once) with their weights in `data`."""

    def __init__(self, data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, shape) -> None:
        self.data, self.indices, self.indptr = data, indices, indptr
        self.shape = (int(shape[0]), int(shape[1]))

    @classmethod
    def from_entries(cls, rows, cols, vals, shape: tuple[int, int]) -> Columns:
        rows = np.asarray(rows, dtype=np.int32)
        cols = np.asarray(cols, dtype=np.int32)
        order = np.lexsort((rows, cols))  # by term, then by document
        counts = np.bincount(cols, minlength=shape[1])
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
        data = np.asarray(vals, dtype=np.float32)[order]
        return cls(data, rows[order], indptr, shape)

    def column_sum(self, cols: list[int]) -> np.ndarray:
        """Each document's summed weight over the columns `cols` (a repeated column counts
        each time)."""
        out = np.zeros(self.shape[0], dtype=np.float32)
        for col in cols:
            start, end = self.indptr[col], self.indptr[col + 1]
            out[self.indices[start:end]] += self.data[start:end]
        return out


class BM25Index:
    def __init__(self, ids: np.ndarray, vocab: dict[str, int], weights: Columns) -> None:
        self.ids = ids
        self.vocab = vocab
        self.weights = weights  # documents × terms, BM25 term weight per (doc, term)

    @classmethod
    def build(cls, ids: np.ndarray, texts: list[str], k1: float = 1.5, b: float = 0.75):
        corpus = [tokenize(t) for t in texts]
        if not any(corpus):
            return cls(ids, {}, Columns.from_entries([], [], [], (len(ids), 0)))
        okapi = BM25Okapi(corpus, k1=k1, b=b)
        vocab = {term: i for i, term in enumerate(sorted(okapi.idf))}
        rows, cols, vals = [], [], []
        for doc, (freqs, length) in enumerate(zip(okapi.doc_freqs, okapi.doc_len, strict=True)):
            norm = k1 * (1 - b + b * length / okapi.avgdl)
            for term, tf in freqs.items():
                rows.append(doc)
                cols.append(vocab[term])
                vals.append(okapi.idf[term] * tf * (k1 + 1) / (tf + norm))
        shape = (len(ids), len(vocab))
        return cls(ids, vocab, Columns.from_entries(rows, cols, vals, shape))

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every chunk for `query` (equal to BM25Okapi.get_scores)."""
        cols = [self.vocab[t] for t in tokenize(query) if t in self.vocab]
        if not cols:
            return np.zeros(len(self.ids), dtype=np.float32)
        return self.weights.column_sum(cols)

    def save(self, path: Path) -> None:
        terms = json.dumps(sorted(self.vocab, key=self.vocab.__getitem__))
        arrays = {
            "format": FORMAT,
            "ids": self.ids,
            "terms": np.frombuffer(terms.encode("utf-8"), dtype=np.uint8),
            "data": self.weights.data,
            "indices": self.weights.indices,
            "indptr": self.weights.indptr,
            "shape": np.array(self.weights.shape),
        }
        replace_atomically(path, lambda tmp: np.savez(tmp, **arrays), ".npz")

    @classmethod
    def load(cls, path: Path) -> BM25Index:
        with np.load(path, allow_pickle=False) as z:
            if int(z["format"]) != FORMAT:
                raise ValueError(f"{path}: index format {int(z['format'])}, expected {FORMAT}")
            terms = json.loads(z["terms"].tobytes().decode("utf-8"))
            shape = tuple(int(x) for x in z["shape"])
            weights = Columns(z["data"], z["indices"], z["indptr"], shape)
            return cls(z["ids"], {t: i for i, t in enumerate(terms)}, weights)
