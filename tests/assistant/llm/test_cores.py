"""A question the user waits for takes the physical cores other processes leave free (never
fewer than the default); what they use is read from /proc/stat less this process's own time."""

from __future__ import annotations

import os

import pytest

from assistant.llm.cores import (
    CoreWatch,
    CpuSample,
    background_threads,
    question_threads,
    read_sample,
)


def test_question_threads_leaves_the_cores_other_work_takes():
    assert question_threads(physical=2, default=1, others=0.05) == 2  # a free machine
    assert question_threads(physical=2, default=1, others=1.0) == 1  # one core busy elsewhere
    assert question_threads(physical=2, default=1, others=0.45) == 2  # busy under half the time
    assert question_threads(physical=2, default=1, others=0.6) == 1  # busy more than half
    assert question_threads(physical=8, default=4, others=1.6) == 6
    assert question_threads(physical=8, default=4, others=7.5) == 4  # never under the default
    assert question_threads(physical=2, default=1, others=None) == 1  # not measured: the default


def test_read_sample_counts_busy_ticks_not_idle_or_iowait(tmp_path):
    stat = tmp_path / "stat"
    stat.write_text("cpu  100 20 30 5000 400 5 6 7 0 0\ncpu0 50 10 15 2500 200 2 3 3 0 0\n")
    sample = read_sample(stat)
    assert sample is not None
    assert sample.busy == pytest.approx((100 + 20 + 30 + 5 + 6 + 7) / os.sysconf("SC_CLK_TCK"))
    assert read_sample(tmp_path / "missing") is None
    (tmp_path / "odd").write_text("intr 1 2 3\n")
    assert read_sample(tmp_path / "odd") is None


class Script:
    """Samples read in turn: (wall, machine busy seconds, own CPU seconds)."""

    def __init__(self, *samples):
        self.samples = [CpuSample(*s) if s else None for s in samples]

    def __call__(self):
        return self.samples.pop(0)


def test_core_watch_subtracts_this_process_and_measures_since_the_last_look():
    watch = CoreWatch(
        Script((0.0, 0.0, 0.0), (10.0, 12.0, 2.0), (10.1, 12.2, 2.2), (20.1, 14.2, 4.2))
    )
    assert watch.others() == pytest.approx(1.0)  # 12 s busy in 10 s, 2 of them ours
    assert watch.others() == pytest.approx(1.0)  # 0.1 s later: too short to tell, the last measure
    assert watch.others() == pytest.approx(0.0)  # the next 10 s: all the busy time was ours


def test_core_watch_look_starts_the_next_interval_at_the_end_of_a_question():
    watch = CoreWatch(Script((0.0, 0.0, 0.0), (5.0, 10.0, 0.0), (6.0, 10.5, 0.0)))
    watch.look()  # a question ended at 5 s, after other work kept both cores busy
    assert watch.others() == pytest.approx(0.5)  # the pause since: half a core busy elsewhere


def test_core_watch_without_proc_stat_measures_nothing():
    watch = CoreWatch(lambda: None)
    assert watch.others() is None
    assert question_threads(4, 2, watch.others()) == 2


def test_background_work_takes_the_free_cores_only_while_the_user_is_away():
    assert background_threads(False, physical=2, default=1, others=0.0, load=0.1) is None
    assert background_threads(True, physical=2, default=1, others=0.1, load=2.4) == 2  # our load
    assert background_threads(True, physical=2, default=1, others=0.9, load=1.0) == 1
    # nothing measured (no /proc/stat): the load average's rule
    assert background_threads(True, physical=2, default=1, others=None, load=1.5) == 2
    assert background_threads(True, physical=2, default=1, others=None, load=2.5) is None
