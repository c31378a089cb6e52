"""Clock: where one question's time goes, stage by stage (embed, retrieve, prefill, decode…).

The answer path laps it at each stage and the badge, the JSON events and the benches read
`done()`; PromptCache marks the first token on it. Also `local_time`, a stored timestamp as the
user reads it (the CLI and the TUI both show times so)."""

from __future__ import annotations

import time
from datetime import datetime


class Clock:
    """Stage timings: lap(name) adds the time since the previous lap to `name`."""

    STAGES = (
        "embed", "qa_lookup", "retrieve", "rerank", "wait", "kv_load", "prefill", "decode", "ttft",
    )  # fmt: skip

    def __init__(self) -> None:
        self.start = self.last = time.perf_counter()
        self.times: dict[str, float] = {}

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.times[name] = self.times.get(name, 0.0) + now - self.last
        self.last = now

    def mark(self, name: str) -> None:
        self.times.setdefault(name, time.perf_counter() - self.start)

    def done(self) -> dict[str, float]:
        self.times["total"] = time.perf_counter() - self.start
        self.times.setdefault("ttft", self.times["total"])  # no token: the first byte is the end
        for stage in self.STAGES:
            self.times.setdefault(stage, 0.0)
        return {k: round(v, 6) for k, v in self.times.items()}


def local_time(iso: str) -> str:
    """A stored UTC timestamp as the user reads it: local time, to the minute
    ("2026-11-27 09:48"); a value that is no timestamp is shown as it is."""
    try:
        return datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M")
    except (TypeError, ValueError):
        return str(iso)
