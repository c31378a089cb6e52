"""The idle scheduler: APScheduler checks, every half minute, whether the user has been away for
`precompute.idle_minutes` (and, if asked, whether the machine is on mains power); if so it runs
a precompute pass that stops as soon as the user is back."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from apscheduler.schedulers.background import BackgroundScheduler

from assistant.config_sections import PrecomputeSettings
from assistant.precompute.activity import Activity
from assistant.precompute.parts import PrecomputeParts
from assistant.precompute.runner import (
    Precompute,
    PrecomputeBusy,
    PrecomputeProgressed,
    PrecomputeReport,
)

__all__ = ["IdleScheduler", "Precompute", "PrecomputeProgressed", "PrecomputeReport", "on_ac"]

log = logging.getLogger(__name__)
POWER = Path("/sys/class/power_supply")
RETRY_SECONDS = 600  # a failed idle pass is tried again after this long


def on_ac(root: Path = POWER) -> bool | None:
    """True on mains power, False on battery, None where the system does not say."""
    mains = [p for p in root.glob("*") if _read(p / "type") == "Mains"] if root.is_dir() else []
    if not mains:
        return None
    return any(_read(p / "online") == "1" for p in mains)


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


class IdleScheduler:
    def __init__(
        self,
        settings: PrecomputeSettings,
        presence: Activity,
        parts: Callable[[], PrecomputeParts],
        notify: Callable[[PrecomputeProgressed], None] | None = None,
        done: Callable[[PrecomputeReport], None] | None = None,
        check_seconds: float = 30.0,
        power: Callable[[], bool | None] = on_ac,
    ) -> None:
        """`parts` builds a pass's parts when one is due (the models load then, not before)."""
        self.settings, self.presence, self.parts = settings, presence, parts
        self.notify, self.done = notify, done
        self.power = power
        self.check_seconds = check_seconds
        self.scheduler = BackgroundScheduler(daemon=True)
        self._running = threading.Lock()
        self._stop = threading.Event()
        self._retry_at = 0.0  # after a failed pass: not before then (monotonic seconds)
        self._busy = False  # the last pass was skipped for another one: said once

    def start(self) -> None:
        self.scheduler.add_job(
            self.tick, "interval", seconds=self.check_seconds, max_instances=1, coalesce=True
        )
        self.scheduler.start()

    def shutdown(self) -> None:
        self._stop.set()
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)

    def due(self) -> bool:
        """The user has been away long enough, and the power source allows it."""
        settings = self.settings
        if time.monotonic() < self._retry_at:
            return False
        if settings.ac_only and self.power() is False:
            return False
        return self.presence.idle_seconds() >= settings.idle_minutes * 60

    def tick(self) -> PrecomputeReport | None:
        """One check; runs a pass when due (never two at once). Returns its report, if any."""
        if not self.due() or not self._running.acquire(blocking=False):
            return None
        try:
            report = Precompute(self.parts()).run(
                notify=self.notify, cancelled=self._user_back, stop_for_user=True, wait=False
            )
        except PrecomputeBusy as exc:  # the user's `p`, or the night's timer in its own process
            # said once while it lasts, not every half minute of a night's run
            log.log(
                logging.DEBUG if self._busy else logging.INFO, "idle precompute skipped: %s", exc
            )
            self._busy = True
            return None
        except Exception:  # noqa: BLE001 (a model that will not load, a full disk: in the log)
            # APScheduler's own logger has no handler here: said in assistant.log, and not
            # tried again every half minute (a failing model export would run each time)
            self._retry_at = time.monotonic() + RETRY_SECONDS
            log.exception("idle precompute failed; tried again in %d minutes", RETRY_SECONDS // 60)
            return None
        else:
            self._busy = False
            log.info("idle precompute: %s", report.summary())
            if self.done:
                self.done(report)
            return report
        finally:
            self._running.release()

    def _user_back(self) -> bool:
        return self._stop.is_set() or not self.due()
