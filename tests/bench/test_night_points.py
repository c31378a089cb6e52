"""bench/night.py --one-night asks each point's questions on a snapshot of the night's home: the
snapshot shares the KV blobs' files but nothing the questions may change reaches the night."""

from __future__ import annotations

import os

import pytest

from bench.night_points import projection, snapshot
from cache.files import replace_atomically


def test_a_snapshot_links_the_blobs_copies_the_rest_and_leaves_out_run_markers(tmp_path):
    home = tmp_path / "night"
    (home / "cache" / "kv" / "ab").mkdir(parents=True)
    (home / "run").mkdir()
    blob = home / "cache" / "kv" / "ab" / "abcd.kv"
    blob.write_bytes(b"kv of a chunk")
    (home / "cache" / "qa.db").write_bytes(b"the night's stored answers")
    (home / "knowledge.db").write_bytes(b"mail")
    (home / "run" / "precompute.lock").write_text("1234")

    to = snapshot(home, tmp_path / "at-10" / "full-any-ev")

    linked = to / "cache" / "kv" / "ab" / "abcd.kv"
    assert os.path.samefile(linked, blob)
    assert not os.path.samefile(to / "cache" / "qa.db", home / "cache" / "qa.db")
    assert (to / "knowledge.db").read_bytes() == b"mail"
    assert not (to / "run").exists()
    # what the questions write goes to the snapshot alone: a blob is replaced by rename, a
    # database is its own file
    replace_atomically(linked, lambda tmp: tmp.write_bytes(b"a question's KV"))
    (to / "cache" / "qa.db").write_bytes(b"answers of the questions")
    assert blob.read_bytes() == b"kv of a chunk"
    assert (home / "cache" / "qa.db").read_bytes() == b"the night's stored answers"


def _point(minutes: float, chunk_jobs: int, kv_bytes: int) -> dict:
    return {"minutes": minutes, "nodes": chunk_jobs, "jobs": {"chunk_kv": chunk_jobs},
            "kv_bytes": kv_bytes}  # fmt: skip


def test_the_projection_holds_only_what_the_kv_budget_has_room_for():
    points = [_point(0, 0, 0), _point(60, 1000, 5 * 10**9)]  # 5 MB a chunk job

    free = projection(points, chunks_recent=4000)
    held = projection(points, chunks_recent=4000, budget=6 * 10**9)

    assert free["nodes_8h"] == held["nodes_8h"] == pytest.approx(8000)
    assert free["share_of_last_6_weeks_8h"] == 1.0
    assert held["nodes_in_budget"] == 1200
    assert held["share_of_last_6_weeks_8h"] == 0.3
    # a budget with room for the whole night leaves the night's pace the bound
    assert projection(points, 4000, budget=10**12)["share_of_last_6_weeks_8h"] == 1.0


def test_the_pace_counts_the_night_only_up_to_its_last_chunk_node():
    """A night the budget stopped making nodes after 60 of its 120 minutes made them at the
    pace of those 60 minutes, not of 120; a point without the time keeps its minutes."""
    stopped = _point(120, 1000, 5 * 10**9) | {"node_seconds": 3600.0}
    assert projection([stopped], None)["nodes_per_hour"] == pytest.approx(1000)
    assert projection([_point(120, 1000, 5 * 10**9)], None)["nodes_per_hour"] == pytest.approx(500)


def test_covered_questions_are_those_whose_every_prompt_chunk_came_from_the_tree():
    from bench.night_points import covered

    rows = [
        {"qa_hit": False, "kv_chunks": 3, "kv_chunks_reused": 3, "ttft": 2.0},
        {"qa_hit": False, "kv_chunks": 3, "kv_chunks_reused": 3, "ttft": 4.0},
        {"qa_hit": False, "kv_chunks": 3, "kv_chunks_reused": 2, "ttft": 9.0},  # one prefilled
        {"qa_hit": True, "kv_chunks": 0, "kv_chunks_reused": 0, "ttft": 0.1},  # served
        {"qa_hit": False, "kv_chunks": 0, "kv_chunks_reused": 0, "ttft": 0.5},  # no chunks
    ]
    got = covered(rows)
    assert got["written"] == 4 and got["covered_questions"] == 2
    assert got["ttft_p50_covered_s"] == 3.0 and got["ttft_mean_covered_s"] == 3.0
    assert covered(rows[2:3])["ttft_p50_covered_s"] is None
