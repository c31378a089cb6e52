"""The nightly reranker self-check behind `rerank = "auto"`: a reranker that puts the known
source in the top 3 more often than fused turns on; one that loses leaves fused."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from assistant.config_sections import RerankerSettings
from assistant.knowledge.retrieval import Hit
from assistant.rerank.reranker import Reranker
from assistant.rerank.selection import select
from assistant.rerank.selfcheck import RerankCheck, run_check, sign_test

N_CHUNKS = 20


def text(chunk: int) -> str:
    return f"chunk {chunk} about topic {chunk}"


class FusedRetriever:
    """Fused order: the source of question i ranks at (i mod 6) + 1 among the candidates, so
    fused has it in the top 3 for half the questions."""

    def search(
        self, question: str, k: int, mode="hybrid", query_vector=None, access_weight=1.0, where=None
    ):
        source = int(question.split()[-1])
        others = [c for c in range(N_CHUNKS) if c != source]
        order = others[:]
        order.insert(source % 6, source)
        return [Hit(c, 1.0 - r / 100, None, None, SimpleNamespace(text=text(c)))
                for r, c in enumerate(order[:k])]  # fmt: skip


class SourceFirst:
    """Scores a passage by whether it is the question's source (knows the answer)."""

    def scores(self, query, passages, use_doc_kv=True, check=None) -> np.ndarray:
        source = f"topic {query.split()[-1]}"
        return np.array([1.0 if p.endswith(source) else 0.0 for p in passages])


class SourceLast(SourceFirst):
    def scores(self, query, passages, use_doc_kv=True, check=None) -> np.ndarray:
        return -super().scores(query, passages)


PROBES = [(f"what about topic {c}", c) for c in range(18)]


def selector(reranker: Reranker):
    def run(question: str, k: int, mode: str, check=None) -> list[int]:
        hits = select(FusedRetriever(), reranker, question, k, "keep", mode=mode, check=check)
        return [h.chunk_id for h in hits]

    return run


def test_a_reranker_that_finds_the_source_turns_on_and_a_loser_does_not():
    settings = RerankerSettings(candidates=10)
    reranker = Reranker("auto", settings, full=SourceLast, cross=SourceFirst)
    result = run_check(selector(reranker), PROBES, ["full", "cross"])
    assert result.fused == 0.5  # rank 1-3 of 1-6
    assert result.modes["cross"].source_at_3 == 1.0 and result.modes["cross"].wins == 9
    assert result.modes["full"].source_at_3 == 0.0
    assert result.chosen == "cross"


def test_only_a_loser_keeps_fused():
    reranker = Reranker("auto", RerankerSettings(candidates=10), cross=SourceLast)
    result = run_check(selector(reranker), PROBES, ["cross"])
    assert result.modes["cross"].losses == 9 and result.chosen == "off"


def test_a_small_win_is_not_enough():
    """Two questions, both won: not distinguishable from chance at 5%."""
    reranker = Reranker("auto", RerankerSettings(candidates=10), cross=SourceFirst)
    probes = [p for p in PROBES if p[1] % 6 >= 3][:2]
    result = run_check(selector(reranker), probes, ["cross"])
    assert result.modes["cross"].wins == 2 and result.chosen == "off"


class Clock:
    """CPU seconds as a fake clock: each reading of a mode's selection adds its cost."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_winner_too_slow_for_every_question_stays_off_and_is_not_run_on_every_probe():
    clock = Clock()
    calls = {"cross": 0, "full": 0}

    def costly(scorer, seconds: float, name: str):
        class Timed(scorer):
            def scores(self, query, passages, use_doc_kv=True, check=None):
                for _ in passages:  # a candidate at a time, as QL scores them
                    check()
                    clock.now += seconds / len(passages)
                calls[name] += 1
                return super().scores(query, passages)

        return Timed

    reranker = Reranker(
        "auto",
        RerankerSettings(candidates=10),
        full=costly(SourceFirst, 6.0, "full"),  # query likelihood's cost here: seconds
        cross=costly(SourceFirst, 0.4, "cross"),
    )
    result = run_check(selector(reranker), PROBES, ["full", "cross"], 1.0, clock)
    # stopped inside its first question, once 3 questions' worth of budget was spent
    assert result.modes["full"].too_slow and calls["full"] == 0
    assert result.modes["full"].cpu_seconds <= 3.0 + 6.0 / 10
    assert not result.modes["cross"].too_slow and calls["cross"] == len(PROBES)
    assert result.chosen == "cross"
    assert "full too slow (> 1 CPU-s a question)" in result.summary()
    alone = run_check(selector(reranker), PROBES, ["full"], 1.0, clock)
    assert alone.chosen == "off"  # it ranks every source first, and still stays off


def test_sign_test():
    assert sign_test(5, 0) == 1 / 32 and sign_test(4, 0) == 1 / 16
    assert sign_test(0, 0) == 1.0 and sign_test(3, 3) > 0.5


def test_auto_follows_the_saved_result(tmp_path):
    check = RerankCheck(tmp_path / "rerank_check.json")
    reranker = Reranker("auto", RerankerSettings(), cross=SourceFirst, decide=check.chosen)
    assert reranker.current == "off" and not reranker.active  # no check yet: fused
    assert not check.due(min_questions=5)
    for chunk in range(3):
        check.add_probes([f"q{chunk}a", f"q{chunk}b"], chunk)
    assert check.probes(4) == [("q1a", 1), ("q1b", 1), ("q2a", 2), ("q2b", 2)]
    assert check.due(min_questions=5)
    result = run_check(selector(reranker), PROBES, ["cross"])
    check.save(result, probes_seen=6)
    assert RerankCheck(check.path).result() == result
    assert reranker.current == "cross" and reranker.active
    assert not check.due(min_questions=5)  # checked today
    other = Reranker("auto", RerankerSettings(), full=SourceFirst, decide=check.chosen)
    assert other.current == "off"  # a mode this configuration cannot run is not on


def test_a_corrupt_file_reads_as_no_check(tmp_path):
    path = tmp_path / "rerank_check.json"
    path.write_text("{not json")
    check = RerankCheck(path)
    assert check.result() is None and check.probes(10) == []
    check.add_probes(["q"], 1)
    assert check.probes(10) == [("q", 1)]
