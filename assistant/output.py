"""What the CLI writes to stdout for `--json`, and the times it shows: shared by cli, commands
and the TUI, so that none imports another's module for it."""

from __future__ import annotations

import json
import sys
from datetime import datetime


def dump_json(value) -> None:
    json.dump(value, sys.stdout, ensure_ascii=False, indent=2, default=str)
    sys.stdout.write("\n")


def local_time(iso: str) -> str:
    """A stored UTC timestamp as the user reads it: local time, to the minute
    ("2026-11-27 09:48"); a value that is no timestamp is shown as it is."""
    try:
        return datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M")
    except (TypeError, ValueError):
        return str(iso)
