"""What the CLI writes to stdout for `--json`: shared by cli and commands, so neither imports
the other's module for it."""

from __future__ import annotations

import json
import sys


def dump_json(value) -> None:
    json.dump(value, sys.stdout, ensure_ascii=False, indent=2, default=str)
    sys.stdout.write("\n")
