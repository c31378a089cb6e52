"""When a precompute run must stop: `--for 2h` / `--until 07:00` as epoch seconds; and whether
now is within a night of `--from 01:00 --until 07:00`."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([hms])")
_UNIT = {"h": 3600, "m": 60, "s": 1}


def parse_duration(text: str) -> float:
    """Seconds in "2h", "90m", "1h30m", "45s" (a bare number is minutes)."""
    text = text.strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text) * 60
    parts = _PART.findall(text)
    if not parts or _PART.sub("", text).strip():
        raise ValueError(f"not a duration: {text!r} (try 2h, 90m or 1h30m)")
    return sum(float(n) * _UNIT[u] for n, u in parts)


def next_time(hhmm: str, now: datetime | None = None) -> datetime:
    """The next local time of day `hhmm` after `now` (today, or tomorrow if it has passed)."""
    now = now or datetime.now()
    try:
        hour, minute = (int(x) for x in hhmm.split(":"))
        target = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    except ValueError as exc:
        raise ValueError(f"not a time of day: {hhmm!r} (try 07:00)") from exc
    return target if target > now else target + timedelta(days=1)


def in_window(start: str, until: str, now: datetime | None = None) -> bool:
    """Whether `now` lies in the night from `start` to `until` (local times of day; the night
    runs across midnight when `until` is not after `start`, and is the whole day when they are
    equal). A timer that fires late, as one that elapsed while the machine slept does on waking,
    finds itself outside the night."""
    now = now or datetime.now()
    first, last = (next_time(hhmm, now) for hhmm in (start, until))
    # the night has begun and not ended when its next end comes before its next start
    return first == last or last <= first


def deadline_from(duration: str | None, until: str | None, now: datetime | None = None):
    """Epoch seconds to stop at, or None (run until there is nothing left to do)."""
    now = now or datetime.now()
    if duration:
        return now.timestamp() + parse_duration(duration)
    if until:
        return next_time(until, now).timestamp()
    return None
