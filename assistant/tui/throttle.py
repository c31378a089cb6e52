"""Merges a worker's progress reports: a fast import reports per message, the screen needs a few
updates a second."""

from __future__ import annotations

import time


class Throttle:
    def __init__(self, interval: float = 0.05) -> None:
        self.interval = interval
        self.last = float("-inf")

    def ready(self, always: bool = False) -> bool:
        """True at most once per interval, and whenever `always` (a phase's first or last step)."""
        now = time.monotonic()
        if always or now - self.last >= self.interval:
            self.last = now
            return True
        return False
