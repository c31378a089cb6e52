"""BM25 for large homes: SQLite FTS5's bm25() over the chunks_fts table in knowledge.db.

The table is kept in step with imports by triggers (migration 0002_chunks_fts), so nothing is
built or loaded at start-up and nothing of it is resident. FTS5 scores every chunk a query term
matches; a term in a large share of the chunks would make a query scan most of them, so the
candidates come from the query's rarer terms (together matching at most `max_matches` chunks),
and the candidates are then scored with every term, by rowid. A query whose rarest term alone
matches more is ranked among about the newest `max_matches` chunks it matches.

Scoring given chunks for all the query's terms is done here, with FTS5's own formula and
statistics (row count and total length from the index's averages record, each chunk's length from
its docsize row, document frequencies from fts5vocab): FTS5 cannot restrict a MATCH to a list of
rowids, so `MATCH … AND rowid IN (…)` merges every matching row of every term, common ones
included, before it filters (over a second at 1M chunks).

FTS5's BM25 has k1 = 1.2 and b = 0.75 and counts stopwords in a chunk's length; the small-home
index (bm25.py) uses rank-bm25's k1 = 1.5: bench/retrieval.py compares the two side by side.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
from sqlite_utils import Database

from assistant.knowledge.bm25 import tokenize
from assistant.knowledge.ivf import present
from cache.words import unaccented

_ALNUM = re.compile(r"[^\W_]+", re.UNICODE)  # FTS5's unicode61 splits "a_b" where \w does not
K1, B = 1.2, 0.75  # FTS5's bm25()


def _plain(text: str) -> str:
    """`text` without accents, as unicode61 folds them (remove_diacritics); ASCII as it is."""
    if text.isascii():
        return text
    return unaccented(text)


def query_terms(query: str) -> list[str]:
    """The query's distinct terms as FTS5 indexes them, stopwords left out."""
    terms = [t for token in tokenize(_plain(query)) for t in _ALNUM.findall(token)]
    return list(dict.fromkeys(terms))


def index_tokens(text: str) -> list[str]:
    """A chunk's tokens as FTS5's unicode61 tokenizer indexes them (stopwords included)."""
    return _ALNUM.findall(_plain(text).lower())


def varints(blob: bytes) -> list[int]:
    """The SQLite varints of an FTS5 record (its averages and docsize rows)."""
    out, i = [], 0
    while i < len(blob):
        value = 0
        for n in range(9):
            byte = blob[i]
            i += 1
            if n == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


def _totals(record: bytes) -> tuple[int, int]:
    """(rows, tokens in all rows) of the index, from its averages record."""
    values = varints(record)
    return (values[0], values[1]) if len(values) >= 2 else (0, 0)


def _lacks(text: str, terms: Mapping[str, float]) -> bool:
    """An ASCII text holding none of `terms` even as a substring scores 0: known without
    tokenizing it (a filter's few hundred chunks are scored one by one)."""
    low = text.lower()
    return low.isascii() and not any(t in low for t in terms)


def _match(terms: Sequence[str]) -> str:
    return " OR ".join(f'"{t}"' for t in terms)


class ChunkFts:
    """Reads the chunks_fts table (written only by the triggers of migration 0002)."""

    def __init__(self, db: Database, max_matches: int = 2_000) -> None:
        self.db = db
        self.max_matches = max_matches
        self._df: dict[str, int | None] = {}  # document frequencies, for `_record`
        self._record = b""  # the index's averages record, as `_refresh` last read it

    def search(
        self, query: str, n: int, among: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids, BM25 scores) of the best `n` chunks, best first; empty when no term
        of the query occurs in any chunk. `among`: only those of them in it are kept (and
        rescored), a mail filter's chunks, ascending."""
        terms = query_terms(query)
        probe, matches = self.selective(terms)
        if not probe:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        if among is not None:
            return self._among(terms, probe, matches, among, n)
        rows = self.db.execute(
            "SELECT rowid, -bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? "
            "AND rowid >= ? ORDER BY rank LIMIT ?",
            [_match(probe), self._newest(matches), n],
        ).fetchall()
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        scores = np.array([r[1] for r in rows], dtype=np.float64)
        if len(probe) < len(terms):
            scores = self.scores(terms, ids)
        order = np.lexsort((ids, -scores))
        return ids[order], scores[order]

    def _among(
        self, terms: list[str], probe: list[str], matches: int, among: np.ndarray, n: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """`search` kept to the chunks `among` (ascending ids): the probe's matches are read as
        rowids alone (no bm25() over the matches the filter drops), those in `among` are
        scored for every term, the best `n` kept."""
        (found,) = self.db.execute(
            "SELECT group_concat(rowid) FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid >= ?",
            [_match(probe), self._newest(matches)],
        ).fetchone()
        ids, _ = present(among, np.fromstring(found or "", dtype=np.int64, sep=","))
        scores = self.scores(terms, ids)
        order = np.lexsort((ids, -scores))[:n]
        return ids[order], scores[order]

    def _newest(self, matches: int) -> int:
        """The smallest rowid to rank: 0, or where a probe that would match more than
        max_matches chunks is cut to about the newest max_matches of them (a query of only
        common terms, whose BM25 says little; its terms are assumed spread evenly over ids)."""
        if matches <= self.max_matches:
            return 0
        row = self.db.execute("SELECT rowid FROM chunks_fts ORDER BY rowid DESC LIMIT 1")
        newest = (row.fetchone() or (0,))[0]
        return int(newest - newest * self.max_matches / matches)

    def scores(self, terms: Sequence[str], ids: np.ndarray) -> np.ndarray:
        """BM25 of each of `ids` for all of `terms` (0 where none occurs in the chunk), as
        FTS5's bm25() scores it, computed from the index's statistics (see the module)."""
        out = np.zeros(len(ids))
        df = self.frequencies(terms)
        if not len(ids) or not df:
            return out
        rows, total = _totals(self._record)  # as frequencies() just read it
        idf = {t: max(math.log((rows - d + 0.5) / (d + 0.5)), 1e-6) for t, d in df.items()}
        average = total / max(rows, 1)
        marks = ",".join("?" * len(ids))
        keys = [int(i) for i in ids]
        texts = dict(
            self.db.execute(f"SELECT rowid, text FROM chunks_fts WHERE rowid IN ({marks})", keys)
        )
        sizes = self.db.execute(
            f"SELECT id, sz FROM chunks_fts_docsize WHERE id IN ({marks})", keys
        )
        length = {i: varints(sz)[0] for i, sz in sizes}
        for p, chunk_id in enumerate(keys):
            if chunk_id not in texts or _lacks(texts[chunk_id], idf):
                continue
            tf = Counter(t for t in index_tokens(texts[chunk_id]) if t in idf)
            norm = K1 * (1 - B + B * length.get(chunk_id, 0) / average)
            out[p] = sum(idf[t] * n * (K1 + 1) / (n + norm) for t, n in tf.items())
        return out

    def _refresh(self) -> None:
        """Read the index's averages record; the kept document frequencies go when it changed
        (an import or a delete)."""
        row = self.db.execute("SELECT block FROM chunks_fts_data WHERE id = 1").fetchone()
        record = row[0] if row and row[0] else b""
        if record != self._record:
            self._df, self._record = {}, record

    def frequencies(self, terms: Sequence[str]) -> dict[str, int]:
        """How many chunks hold each of `terms` (terms in none are left out). One lookup per
        term: fts5vocab answers `term = ?` from the index but `term IN (…)` by a scan, and it
        reads the term's whole posting list; kept until the index changes."""
        self._refresh()
        sql = "SELECT doc FROM chunks_fts_terms WHERE term = ?"
        for t in dict.fromkeys(terms):
            if t not in self._df:
                row = self.db.execute(sql, [t]).fetchone()
                self._df[t] = row[0] if row is not None else None
        return {t: self._df[t] for t in dict.fromkeys(terms) if self._df[t] is not None}

    def selective(self, terms: Sequence[str]) -> tuple[list[str], int]:
        """The rarest terms that together occur in at most max_matches chunks (at least the
        rarest one), and how many chunks they occur in; terms in no chunk are left out."""
        df = self.frequencies(terms)
        chosen, total = [], 0
        for count, term in sorted((df[t], t) for t in terms if t in df):
            if chosen and total + count > self.max_matches:
                break
            chosen.append(term)
            total += count
        return chosen, total

    def bank_stats(self, terms: Sequence[str], chunks: int) -> tuple[float, float]:
        """Mean and standard deviation of the query's BM25 over every chunk, estimated from
        the terms' document frequencies: a chunk holding a term once, at the average length,
        gets the term's idf (FTS5's k1 and b cancel there), terms occur independently."""
        if chunks <= 0:
            return 0.0, 0.0
        df = np.array(list(self.frequencies(terms).values()), dtype=np.float64)
        idf = np.maximum(np.log((chunks - df + 0.5) / (df + 0.5)), 1e-6)
        share = df / chunks
        mean = float((share * idf).sum())
        return mean, float(np.sqrt((share * (1 - share) * idf**2).sum()))
