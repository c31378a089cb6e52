"""The line scorer's self-supervised fit: the logistic weights find the feature that tells the
source line, the bars keep their promises on the written questions, hard questions weigh more."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np

from assistant.answer import fit
from assistant.answer.evidence import FEATURES, LineWeights

COS, KIND = FEATURES.index("cosine"), FEATURES.index("kind")


def _probe(rng: np.random.Generator, answerable: bool = True, hard: float = 0.0) -> fit.Probe:
    """Ten lines; the source line (first) has a higher cosine and holds the kind asked for."""
    x = rng.normal(0.2, 0.05, (10, len(FEATURES))).astype(np.float32)
    x[:, KIND] = 0.0
    y = np.zeros(10, dtype=np.float32)
    y[0] = 1.0
    x[0, COS] += 0.4
    x[0, KIND] = 1.0
    without = rng.normal(0.2, 0.05, (10, len(FEATURES))).astype(np.float32)
    without[:, KIND] = 0.0
    return fit.Probe("q", "line", x, y, without if answerable else None, hard)


def test_the_fit_weighs_the_features_that_tell_the_source_line() -> None:
    rng = np.random.default_rng(0)
    probes = [_probe(rng) for _ in range(60)]
    weights = fit.fit(probes)
    assert weights.coef[COS] > 0 and weights.coef[KIND] > 0
    report = fit.report(weights, probes)
    assert report["source_line_first"] == 1.0
    assert report["not_found_without_source"] > 0.9  # the source-less asks fall under the bar


def test_the_bars_call_at_most_the_missed_share_not_found_and_mark_at_most_the_marked_share():
    rng = np.random.default_rng(1)
    probes = [_probe(rng) for _ in range(80)]
    weights = fit.fit(probes)
    report = fit.report(weights, probes)
    assert report["not_found_with_source"] <= fit.MISSED + 1e-9
    assert report["right_marked"] <= fit.MARKED + 0.02
    assert 0.0 <= weights.weak <= weights.answer <= 1.0


def test_questions_worded_unlike_their_line_weigh_more() -> None:
    """Two halves disagree on which feature tells the source line; the hard half wins."""
    rng = np.random.default_rng(2)
    easy, hard = [], []
    for _ in range(40):
        p = _probe(rng)
        p.x[0, KIND] = 0.0
        easy.append(p)  # told by cosine alone
        q = _probe(rng, hard=1.0)
        q.x[0, COS] -= 0.4
        hard.append(q)  # told by the kind alone
    weights = fit.fit(easy + hard)
    assert weights.coef[KIND] > weights.coef[COS]


def test_a_cleaned_question_keeps_its_seed_and_one_line() -> None:
    assert fit.clean("When", " is the board meeting?\nMore text") == "When is the board meeting?"
    assert fit.clean("What", " is the passage about?") == ""  # about the passage, not the mail
    assert fit.clean("Who", "?") == ""


def test_the_seed_follows_what_the_line_holds() -> None:
    seeds = {fit.seed_for("Enron paid $1.2 million for it.", random.Random(i)) for i in range(20)}
    assert seeds <= {"How much", "What", "Who"} and "How much" in seeds


def test_saved_weights_of_another_feature_set_are_not_used(tmp_path) -> None:
    path = tmp_path / "w.json"
    path.write_text('{"coef": [1, 2], "bias": 0, "answer": 0.5, "weak": 0.2}')
    assert LineWeights.load(path) is None


class _Written:
    """A mailbox whose written questions are given probes (no model, no retrieval)."""

    def __init__(self, probes: list[fit.Probe]) -> None:
        self._probes = probes

    def probes(self, n: int, rng: random.Random, background: bool = True) -> list[fit.Probe]:
        return self._probes[:n]


def test_a_refit_replaces_the_weights_in_use_only_where_it_does_better_on_held_out_questions():
    """The night's fit is tried on folds of its questions and checked on the one held out:
    weights that already put every source line first are kept (no win at all), weights that
    miss them and call the questions "not found" are replaced; with no weights to beat, the
    fit is taken as before."""
    rng = np.random.default_rng(3)
    mailbox = _Written([_probe(rng) for _ in range(60)])
    good = fit.fit(mailbox.probes(60, random.Random(0)))
    assert fit.refit(mailbox, 60, random.Random(1), current=good) is None
    wrong = LineWeights(tuple(-c for c in good.coef), 0.0, 0.95, 0.9)  # the source line last
    refitted = fit.refit(mailbox, 60, random.Random(1), current=wrong)
    assert refitted is not None and refitted.coef[COS] > 0
    assert fit.refit(mailbox, 60, random.Random(1)) is not None
    assert fit.refit(mailbox, 30, random.Random(1), current=wrong) is None  # too few to fit


def _twin(rng: np.random.Generator) -> fit.Probe:
    """A probe whose second line is its source line's twin but for noise on what tells them
    (cosine and kind): which of the two comes first is a coin's toss for any weights, and
    weights that weigh the two features otherwise toss otherwise."""
    p = _probe(rng)
    p.x[1] = p.x[0]
    p.x[1, [COS, KIND]] += rng.normal(0.0, 0.3, 2).astype(np.float32)
    return p


def test_a_fit_that_wins_no_more_questions_than_chance_gives_does_not_replace_the_weights():
    """Weights in use that weigh cosine alone (and call every question "not found", so that
    only the lines decide), on questions where the source line and its twin tie: the fit,
    weighing the kind too, wins some held-out questions and loses about as many (a single
    split may show it ahead), and is not taken."""
    rng = np.random.default_rng(4)
    by_cosine = []
    for _ in range(60):
        p = _probe(rng)
        p.x[0, KIND] = 0.0
        by_cosine.append(p)
    current = replace(fit.fit(by_cosine), answer=1.0, weak=1.0)
    probes = [_twin(rng) for _ in range(80)]
    result = fit.trial(probes, current, random.Random(0))
    assert result.wins > result.losses > 5 and result.p > fit.SIGNIFICANCE
    assert result.not_found_fit <= result.not_found_current and not result.better
    assert fit.refit(_Written(probes), 80, random.Random(0), current=current) is None


def test_a_fit_that_calls_more_answerable_questions_not_found_does_not_replace_the_weights():
    """Even winning every question beyond chance, a fit whose bar calls more of the written
    (answerable) questions "not found" than the weights in use keeps them."""
    rng = np.random.default_rng(5)
    probes = [_probe(rng) for _ in range(60)]
    good = fit.fit(probes)
    anyline = LineWeights(tuple(-c for c in good.coef), 0.0, 0.0, 0.0)  # last line, never none
    result = fit.trial(probes, anyline, random.Random(0))
    assert result.p <= fit.SIGNIFICANCE and result.not_found_current == 0
    assert result.not_found_fit > 0 and not result.better


def test_the_sign_test_is_the_binomial_tail() -> None:
    assert fit.sign_test(0, 0) == 1.0
    assert fit.sign_test(5, 0) == 1 / 32
    assert abs(fit.sign_test(8, 2) - 56 / 1024) < 1e-12  # C(10,8)+C(10,9)+C(10,10) over 2^10
    assert fit.sign_test(2, 8) > 0.9
