"""Clock: where one question's time goes, stage by stage (embed, retrieve, prefill, decode…).

The answer path laps it at each stage and the badge, the JSON events and the benches read
`done()`; PromptCache marks the first token on it."""

from __future__ import annotations

import time


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
