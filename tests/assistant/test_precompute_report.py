"""A night runs in rounds; what it reports is the sum of its rounds, stopped as the last one."""

from __future__ import annotations

from assistant.precompute.runner import PrecomputeReport


def test_rounds_add_up_and_the_last_round_says_why_it_stopped() -> None:
    first = PrecomputeReport(
        jobs_done=3,
        jobs_left=5,
        failed=1,
        cpu_seconds=2.0,
        wall_seconds=1.5,
        stopped="finished",
        by_kind={"kv": 2, "qa": 1},
    )
    second = PrecomputeReport(
        jobs_done=4,
        jobs_left=2,
        cpu_seconds=3.0,
        wall_seconds=2.5,
        stopped="deadline",
        by_kind={"qa": 3, "refresh": 1},
    )
    night = first.then(second)
    assert (night.jobs_done, night.jobs_left, night.failed) == (7, 2, 1)
    assert (night.cpu_seconds, night.wall_seconds) == (5.0, 4.0)
    assert night.stopped == "deadline"
    assert night.by_kind == {"kv": 2, "qa": 4, "refresh": 1}
    assert first.by_kind == {"kv": 2, "qa": 1}  # the rounds themselves are left as they were
