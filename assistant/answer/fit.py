"""The line scorer's weights and bars, fitted on questions the model writes about lines of the
user's own mailbox (self-supervised: no evaluation set, no labels from the user).

For a sampled line, the model writes a question seeded by what the line holds (a figure → "How
much", a date → "When", a name → "Who" …). The question then takes the user's path: its chunks
are selected, every line of them scored. The line it was written from is the positive, the rest
are negatives (a logistic fit, class-balanced, L2). For the bars, the same question is asked
again with the source mail taken out of its chunks: what the best line then scores is what an
unanswerable question scores.
"""

from __future__ import annotations

import logging
import math
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from assistant.answer.evidence import (
    FEATURES,
    LineFinder,
    LineWeights,
    candidates_of,
    mail_key,
)
from assistant.answer.lines import Line, mail_lines
from assistant.answer.text import answer_kinds, terms
from assistant.knowledge.store import ChunkRecord, KnowledgeStore
from assistant.kv.prompt_cache import PromptCache
from assistant.rerank.selection import Selection

log = logging.getLogger(__name__)

PROMPT = "Please write a question that this passage answers.\nQuestion: {seed}"
SEED_OF_KIND = {"number": "How much", "date": "When", "name": "Who", "place": "Where"}
MIN_WORDS = 6
# the bars: at most this share of the written (answerable) questions is called "not found",
# and at most this share of those whose best line is right is shown marked
MISSED = 0.05
# a written question weighs 1 + HARD_WEIGHT × the share of its terms its line lacks: the fit
# leans on the questions worded least like their line, as a user's are
HARD_WEIGHT = 3.0
HARD = 0.5
MARKED = 0.15
# a refit replaces the weights in use only where fits on FOLDS−1 of FOLDS folds of the written
# questions beat them on the held-out fold beyond chance (a one-sided sign test)
FOLDS = 5
SIGNIFICANCE = 0.05

Write = Callable[[str, str], str]  # (passage, seed) → the model's continuation
Select = Callable[[str, np.ndarray], list[ChunkRecord]]  # the user's path: the prompt's chunks
Widen = Callable[[str, np.ndarray], list[ChunkRecord]]  # more chunks, for the source-less ask


@dataclass
class Written:
    """A written question, its source line, the prompt's chunks it got (its source mail among
    them) and the chunks it gets with its source mail taken out: what a probe is made of, kept
    so that features can be computed again (bench/studies/fit_lines.py --probes)."""

    question: str
    line: str
    chunks: list[int]
    without: list[int]


@dataclass
class Probe:
    """A written question's candidate features: with the source mail among them (`x`, `y`: 1 for
    the source line) and without it (`x_without`); `hard`: the share of the question's terms
    the source line lacks (written questions copy their line's words; real ones less so)."""

    question: str
    line: str
    x: np.ndarray
    y: np.ndarray
    x_without: np.ndarray | None
    hard: float = 0.0


def seed_for(line: str, rng: random.Random) -> str:
    kinds = sorted(answer_kinds(line, ""))
    seeds = [SEED_OF_KIND[k] for k in kinds if k in SEED_OF_KIND] + ["What"]
    return rng.choice(seeds)


def sample_lines(
    records: Sequence[ChunkRecord], n: int, rng: random.Random
) -> list[tuple[ChunkRecord, Line]]:
    """Up to `n` (chunk, line) pairs, one line per chunk, lines of MIN_WORDS or more that are
    the mail's own (not a quoted copy)."""
    out = []
    for record in rng.sample(list(records), len(records)):
        lines = [ln for ln in mail_lines(record.text) if len(ln.text.split()) >= MIN_WORDS]
        own = [ln for ln in lines if not ln.quoted] or lines
        if own:
            out.append((record, rng.choice(own)))
        if len(out) >= n:
            break
    return out


def clean(seed: str, continuation: str) -> str:
    text = f"{seed} {continuation.strip()}".split("\n", 1)[0].strip()
    text = text.split("?", 1)[0].strip()
    return f"{text}?" if len(text.split()) >= 4 and not re.search(r"passage", text, re.I) else ""


def write_questions(
    pairs: Sequence[tuple[ChunkRecord, Line]],
    write: Write,
    embed: Callable[[list[str]], np.ndarray],
    select: Select,
    widen: Widen,
    rng: random.Random,
    step: Callable[[], None] = lambda: None,
) -> list[Written]:
    """A written question for each pair whose question brings its source mail into the
    prompt's chunks (the others teach the scorer nothing about lines)."""
    out = []
    for record, line in pairs:
        step()
        seed = seed_for(line.text, rng)
        header = record.text.split("\n", 1)[0]
        question = clean(seed, write(f"{header}\n{line.text}", seed))
        if not question:
            continue
        vector = embed([question])[0]
        records = select(question, vector)
        source = mail_key(record)
        if source not in {mail_key(r) for r in records}:
            continue
        others = [r for r in widen(question, vector) if mail_key(r) != source][: len(records)]
        ids = [r.chunk_id for r in records]
        out.append(Written(question, line.text, ids, [r.chunk_id for r in others]))
    return out


def featurize(written: Sequence[Written], finder: LineFinder, store: KnowledgeStore) -> list[Probe]:
    """The probes of written questions, their features computed by `finder` now."""
    probes = []
    for w in written:
        vector = finder.embedder.embed_batch([w.question])[0]
        candidates = candidates_of(store.chunk_records(w.chunks))
        y = np.array([_is(c.line.text, w.line) for c in candidates], dtype=np.float32)
        if not y.any():
            continue
        x = finder.features(w.question, vector, candidates)
        rest = candidates_of(store.chunk_records(w.without))
        x_without = finder.features(w.question, vector, rest) if rest else None
        asked = set(terms(w.question))
        hard = len(asked - set(terms(w.line))) / len(asked) if asked else 0.0
        probes.append(Probe(w.question, w.line, x, y, x_without, hard))
    return probes


def holds_line(record: ChunkRecord, line: str) -> bool:
    """Whether one of the chunk's lines is the written line (or holds it)."""
    return any(_is(c.text, line) for c in mail_lines(record.text))


def _is(text: str, line: str) -> bool:
    a, b = (" ".join(t.lower().split()) for t in (text, line))
    return a == b or (len(b) > 20 and b in a)


@dataclass
class Mailbox:
    """What writing probes about a home's mail uses: its store, the PromptCache the model writes
    with, the answer path's selection and the retriever (for the source-less ask)."""

    store: KnowledgeStore
    cache: PromptCache
    select: Selection
    finder: LineFinder

    def written(
        self, n: int, rng: random.Random, newest: int = 4000, background: bool = True
    ) -> list[Written]:
        """Questions about `n` lines of the newest `newest` mail chunks. In the `background`,
        the model steps aside for the user (PromptCache.checker raises Preempted)."""
        ids = self.store.newest_chunk_ids("email", newest)
        pairs = sample_lines(self.store.chunk_records(ids), n, rng)
        check = self.cache.checker(background)
        embed = self.finder.embedder.embed_batch
        return write_questions(pairs, self.write, embed, self.chosen, self.widen, rng, check)

    def probes(self, n: int, rng: random.Random, background: bool = True) -> list[Probe]:
        return featurize(self.written(n, rng, background=background), self.finder, self.store)

    def write(self, passage: str, seed: str) -> str:
        prompt = PROMPT.format(seed=seed)
        return self.cache.continue_after_chunk(passage, [prompt], 24, kv=False)[0]

    def chosen(self, question: str, vector: np.ndarray) -> list[ChunkRecord]:
        return [h.record for h in self.select(question, vector, background=True)]

    def widen(self, question: str, vector: np.ndarray) -> list[ChunkRecord]:
        k = 4 * self.select.settings.answer.context_chunks
        hits = self.select.retriever.search(question, k=k, query_vector=vector)
        return [h.record for h in hits]


def refit(
    mailbox: Mailbox,
    n: int,
    rng: random.Random,
    least: int = 40,
    current: LineWeights | None = None,
) -> LineWeights | None:
    """Weights fitted on `n` written questions about the mailbox; None when fewer than `least`
    of them brought their source mail into the prompt (too few to fit on), or when fits on
    part of them do not beat the `current` weights on the rest beyond chance (`trial`): the
    night's few, easy questions can fit weights worse than the shipped ones
    (bench/results/evidence_real_selffit.json), and a single held-out split flipped its verdict
    with the KV cache's number type (bench/results/night_refit_real_q8.json)."""
    probes = mailbox.probes(n, rng)
    if len(probes) < least:
        log.info("line weights not refitted: %d usable questions of %d", len(probes), n)
        return None
    if current is not None:
        result = trial(probes, current, rng)
        if not result.better:
            log.info("line weights not refitted: %s", result)
            return None
    return fit(probes)


@dataclass
class Trial:
    """Fits on all folds but one against the weights in use, each written question scored by
    the fit that did not see it: `wins` (the fit puts its source line first, the weights in use
    do not), `losses` (the other way), the one-sided sign test's `p` on them, and how many of
    the questions (all answerable) each calls "not found"."""

    questions: int
    wins: int
    losses: int
    p: float
    not_found_fit: int
    not_found_current: int

    @property
    def better(self) -> bool:
        """More source lines first beyond chance, and no more answerable questions called
        "not found"."""
        return self.p <= SIGNIFICANCE and self.not_found_fit <= self.not_found_current

    def __str__(self) -> str:
        return (
            f"fit {self.wins} wins, {self.losses} losses on {self.questions} held-out "
            f"questions (p={self.p:.3f}), not found {self.not_found_fit} vs "
            f"{self.not_found_current}"
        )


def trial(probes: Sequence[Probe], current: LineWeights, rng: random.Random) -> Trial:
    """`current` against fits on FOLDS−1 of FOLDS folds of the probes, each probe scored by the
    fit it was held out of (every probe counts once)."""
    shuffled = list(probes)
    rng.shuffle(shuffled)
    folds = [shuffled[i::FOLDS] for i in range(FOLDS)]
    wins = losses = nf_fit = nf_current = 0
    for i, held in enumerate(folds):
        if not held:
            continue
        fitted = fit([p for j, f in enumerate(folds) if j != i for p in f])
        for p in held:
            ours, our_band = _first(fitted, p)
            theirs, their_band = _first(current, p)
            wins += ours and not theirs
            losses += theirs and not ours
            nf_fit += our_band == "none"
            nf_current += their_band == "none"
    return Trial(len(shuffled), wins, losses, sign_test(wins, losses), nf_fit, nf_current)


def _first(weights: LineWeights, probe: Probe) -> tuple[bool, str]:
    """Whether the weights put the probe's source line first, and the band of their best line."""
    prob = weights.probability(probe.x)
    top = int(np.argmax(prob))
    return bool(probe.y[top]), weights.band(float(prob[top]))


def sign_test(wins: int, losses: int) -> float:
    """The one-sided exact sign test: the chance of `wins` or more of `wins + losses` fair coin
    tosses (1.0 with no toss)."""
    n = wins + losses
    return sum(math.comb(n, k) for k in range(wins, n + 1)) / 2**n if n else 1.0


def fit(probes: Sequence[Probe], l2: float = 0.01, steps: int = 2000) -> LineWeights:
    """Logistic weights over the probes' lines (each question's positives and negatives weigh
    alike), then the two bars."""
    x = np.vstack([p.x for p in probes])
    y = np.concatenate([p.y for p in probes])
    w = np.concatenate([_balance(p.y) * (HARD_WEIGHT * p.hard + 1.0) for p in probes])
    coef, bias = _logistic(x, y, w, l2, steps)
    weights = LineWeights(tuple(float(c) for c in coef), float(bias), 0.5, 0.0, "self")
    return with_bars(weights, probes)


def _balance(y: np.ndarray) -> np.ndarray:
    pos = max(float(y.sum()), 1.0)
    neg = max(float(len(y) - y.sum()), 1.0)
    return np.where(y > 0, 0.5 / pos, 0.5 / neg).astype(np.float32)


def _logistic(x, y, w, l2, steps, rate: float = 0.5) -> tuple[np.ndarray, float]:
    """Weighted logistic regression by gradient descent (a few hundred rows × 7 features)."""
    coef, bias = np.zeros(x.shape[1], dtype=np.float64), 0.0
    total = float(w.sum())
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(x @ coef + bias)))
        g = w * (p - y) / total
        coef -= rate * (x.T @ g + l2 * coef)
        bias -= rate * float(g.sum())
    return coef, bias


def with_bars(weights: LineWeights, probes: Sequence[Probe]) -> LineWeights:
    """`weak`: the bar that best parts the written questions from the same questions asked
    without their source mail, calling at most MISSED of the written ones "not found";
    `answer`: at most MARKED of those whose best line is the source score under it. Both on
    the hard questions (at least HARD of their terms not in their line) where there are 20:
    the questions that copy their line's words score higher than a user's do."""
    hard = [p for p in probes if p.hard >= HARD]
    probes = hard if len(hard) >= 20 else probes
    best = np.array([float(weights.probability(p.x).max()) for p in probes])
    right = np.array([_first(weights, p)[0] for p in probes])
    absent = np.array(
        [float(weights.probability(p.x_without).max()) for p in probes if p.x_without is not None]
    )
    weak = _parting_bar(best, absent)
    answer = float(np.quantile(best[right], MARKED)) if right.any() else weak
    return LineWeights(weights.coef, weights.bias, max(answer, weak), weak, weights.fitted_on)


def _parting_bar(present: np.ndarray, absent: np.ndarray) -> float:
    """The bar with the most of `absent` under it less the share of `present` under it, among
    those with at most MISSED of `present` under it."""
    bars = np.unique(np.concatenate([present, absent, [0.0]]))
    best_bar, best_gain = 0.0, -1.0
    for bar in bars:
        missed = float((present < bar).mean())
        if missed > MISSED:
            break
        gain = (float((absent < bar).mean()) if len(absent) else 0.0) - missed
        if gain > best_gain:
            best_bar, best_gain = float(bar), gain
    return best_bar


def report(weights: LineWeights, probes: Sequence[Probe]) -> dict:
    """How the weights do on `probes`: the source line first, "not found" with and without the
    source mail, answers marked."""
    rows, hard = [], []
    for p in probes:
        first, band = _first(weights, p)
        without = float(weights.probability(p.x_without).max()) if p.x_without is not None else 0
        rows.append((first, band, weights.band(without)))
        if p.hard >= HARD:
            hard.append(first)
    n = max(len(rows), 1)
    right = [r for r in rows if r[0]]
    return {
        "questions": len(rows),
        "source_line_first": sum(r[0] for r in rows) / n,
        "hard_questions": len(hard),
        "source_line_first_hard": sum(hard) / max(len(hard), 1),
        "not_found_with_source": sum(r[1] == "none" for r in rows) / n,
        "not_found_without_source": sum(r[2] == "none" for r in rows) / n,
        "right_marked": sum(r[1] == "weak" for r in right) / max(len(right), 1),
        "features": dict(zip(FEATURES, weights.coef, strict=True)),
    }
