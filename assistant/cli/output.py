"""What the CLI writes to stdout for `--json` (the times it shows are clock.local_time, shared
with the TUI, which imports nothing of cli)."""

from __future__ import annotations

import json
import sys


def dump_json(value) -> None:
    json.dump(value, sys.stdout, ensure_ascii=False, indent=2, default=str)
    sys.stdout.write("\n")
