"""How many threads the model runs on: a question the user waits for, and background work while
the user is away, take every physical core that other processes leave free, never fewer than
the default threads.

ggml's threads wait for each other at every layer, so one that shares its core with another
process holds all of them up: on 2 cores with one busy elsewhere, 2 threads prefilled at 0.87×
and decoded at 0.3× the pace of one, while on 2 free cores they prefilled at 1.8× and decoded
at 1.5×, and a real question took 0.59× the time (bench/results/question_threads.json). The
default (half the logical cores, model_file.default_threads) is safe on a busy machine and slow
on a free one, and stays for background work while the user is at the keyboard.

What other processes use is read, not guessed: the machine's busy time (/proc/stat) less this
process's own (its CPU time), over the time since the last look. The last look is taken when a
question ends, so the next question measures the user's pause before it, and at the start,
when the model is made. Where /proc/stat cannot be read (not Linux), the default stands.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# a look closer to the last one than this is too short to measure (ticks are 10 ms)
MIN_INTERVAL = 0.25
# other work under this many cores, on average, leaves a core free: on 2 cores, a process
# busy half the time still let 2 threads answer in 0.87x the time of one; busy 3/4 of the
# time, 0.84x (1.00x in an earlier probe); busy all the time, 1.38x (question_threads.json)
SLACK = 0.5


@dataclass(frozen=True)
class CpuSample:
    wall: float  # time.monotonic()
    busy: float  # seconds the machine's CPUs have been busy, all of them, since boot
    own: float  # seconds of CPU this process has used, all its threads


def read_sample(stat: Path = Path("/proc/stat")) -> CpuSample | None:
    """Now, from /proc/stat's first line (user nice system idle iowait irq softirq steal …, in
    clock ticks; idle and iowait are not busy) and this process's CPU time; None where it
    cannot be read."""
    try:
        with stat.open(encoding="ascii") as fh:
            first = fh.readline().split()
        ticks = [int(v) for v in first[1:9]]
    except (OSError, ValueError):
        return None
    if len(ticks) < 8 or first[0] != "cpu":
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = ticks
    per_second = _ticks_per_second()
    busy = (user + nice + system + irq + softirq + steal) / per_second
    return CpuSample(time.monotonic(), busy, time.process_time())


def _ticks_per_second() -> int:
    try:
        return os.sysconf("SC_CLK_TCK")
    except (ValueError, OSError, AttributeError):
        return 100


class CoreWatch:
    """Cores other processes kept busy, on average, since the last look."""

    def __init__(self, read: Callable[[], CpuSample | None] = read_sample) -> None:
        self._read = read
        self._last = read()
        self._others: float | None = None

    def others(self) -> float | None:
        """Other processes' busy cores since the last look (the last measure again where too
        little time has passed; None where nothing could be measured). Takes a new look."""
        now = self._read()
        last = self._last
        if now is None or last is None:
            self._last = now
            return self._others
        span = now.wall - last.wall
        if span < MIN_INTERVAL:
            return self._others
        self._last = now
        theirs = (now.busy - last.busy) - (now.own - last.own)
        self._others = max(0.0, theirs / span)
        return self._others

    def look(self) -> None:
        """Start the next interval now (a question has ended: what comes next is the pause)."""
        now = self._read()
        if now is not None:
            self._last = now


def question_threads(physical: int, default: int, others: float | None) -> int:
    """Threads for a question: the physical cores other work leaves free (a core busy more
    than half the time counts as taken), never fewer than `default`; `default` where nothing
    was measured."""
    if others is None:
        return default
    taken = math.ceil(max(0.0, others - SLACK))
    return max(default, physical - taken)


def background_threads(
    away: bool, physical: int, default: int, others: float | None, load: float
) -> int | None:
    """Threads for background work (None: the default): while the user is away, the physical
    cores other processes leave free, as for a question; where nothing was measured (no
    /proc/stat), every physical core while the 1-minute load average is under two (it counts
    this process's own threads too)."""
    if not away:
        return None
    if others is None:
        return physical if load < 2.0 and physical > 1 else None
    return question_threads(physical, default, others)


def load() -> float:
    """The 1-minute load average (0 where the system has none)."""
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):
        return 0.0
