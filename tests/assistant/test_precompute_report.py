"""A night runs in rounds; what it reports is the sum of its rounds, stopped as the last one."""

from __future__ import annotations

from assistant.precompute.runner import PrecomputeReport


def test_rounds_add_up_and_the_last_round_says_why_it_stopped() -> None:
    # jobs_done, jobs_left, failed, cpu_seconds, wall_seconds, stopped, by_kind (field order)
    first, second = (
        PrecomputeReport(*fields)
        for fields in [
            (3, 5, 1, 2.0, 1.5, "finished", {"kv": 2, "qa": 1}),
            (4, 2, 0, 3.0, 2.5, "deadline", {"qa": 3, "refresh": 1}),
        ]
    )
    night = first.then(second)
    assert (night.jobs_done, night.jobs_left, night.failed) == (7, 2, 1)
    assert (night.cpu_seconds, night.wall_seconds) == (5.0, 4.0)
    assert night.stopped == "deadline"
    assert night.by_kind == {"kv": 2, "qa": 4, "refresh": 1}
    assert first.by_kind == {"kv": 2, "qa": 1}  # the rounds themselves are left as they were


def test_the_report_says_nodes_an_hour() -> None:
    night = PrecomputeReport(jobs_done=90, wall_seconds=1800.0, by_kind={"chunk_kv": 80})
    assert night.nodes_per_hour == 160.0
    assert "in 1800s (160 nodes an hour)" in night.summary()
    assert "nodes an hour" not in PrecomputeReport(by_kind={"embed": 1}).summary()


def test_the_pace_is_counted_up_to_the_last_chunk_node():
    """A night the KV budget stopped making nodes half-way went on with other jobs: its pace
    counts the time up to its last node, also over rounds (the later round's nodes end after
    the whole earlier round)."""
    night = PrecomputeReport(wall_seconds=3600.0, by_kind={"chunk_kv": 80}, node_seconds=1800.0)
    assert night.nodes_per_hour == 160.0
    first = PrecomputeReport(wall_seconds=600.0, by_kind={"chunk_kv": 10}, node_seconds=300.0)
    quiet = PrecomputeReport(wall_seconds=600.0, by_kind={"qa": 3})
    assert first.then(quiet).node_seconds == 300.0
    more = PrecomputeReport(wall_seconds=600.0, by_kind={"chunk_kv": 5}, node_seconds=120.0)
    assert first.then(quiet).then(more).node_seconds == 1320.0
