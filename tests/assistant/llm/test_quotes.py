"""The evidence segment's runs of tokens quoted from the prompt's chunks (any-order reuse)."""

from __future__ import annotations

from assistant.llm.reuse import Quote, gaps, quoted_runs


def test_runs_found_in_the_chunks_longest_first_and_short_ones_left_to_compute():
    chunks = [[1, 2, 3, 4, 5, 6, 7, 8], [20, 21, 22, 23, 24, 25, 26, 27, 28]]
    evidence = [90, 91, 3, 4, 5, 6, 7, 8, 92, 22, 23, 24, 25, 26, 27, 28, 93, 1, 2, 94]
    runs = quoted_runs(evidence, chunks, least=4)
    assert runs == [Quote(2, 6, 0, 2), Quote(9, 7, 1, 2)]
    assert all(evidence[q.start : q.start + q.length] == chunks[q.chunk][q.at : q.at + q.length]
               for q in runs)  # fmt: skip
    assert quoted_runs(evidence, chunks, least=8) == []  # [1, 2] and the rest are too short


def test_of_two_places_a_run_could_come_from_the_longer_wins():
    chunks = [[5, 6, 7, 0], [9, 5, 6, 7, 8, 9]]
    assert quoted_runs([5, 6, 7, 8, 9], chunks, least=2) == [Quote(0, 5, 1, 1)]


def test_gaps_are_what_the_placed_runs_leave():
    assert gaps(10, [(0, 3), (5, 8)]) == [(3, 5), (8, 10)]
    assert gaps(10, [(2, 10)]) == [(0, 2)]
    assert gaps(4, []) == [(0, 4)]
    assert gaps(4, [(0, 4)]) == []
