"""What `stats` says of the night's coverage plan (coverage.statement: the last six weeks'
chunks, and what it plans last) kept on disk beside the indexes (<home>/index/plan-*.json), so
that `stats` in a fresh process reads it instead of planning over every mail's headers and
the last weeks' texts (7.5 s of an 8 s `stats` on a 100k-mail home, commands_scale.json).

A file is named by the knowledge bank's identity, its chunks version (which every import,
change and removal of mail moves), the day (the plan's today: a pinned one, or the newest mail
up to tomorrow) and a digest of the module that plans; one that cannot be read is planned
again, and a home that cannot be written still gets its statement."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path

from assistant.home import kept
from assistant.precompute import coverage
from assistant.precompute.coverage import Plan


@cache
def rules() -> str:
    """A digest of the planning module's source: another plan, another file."""
    return hashlib.sha256(Path(coverage.__file__ or "").read_bytes()).hexdigest()[:16]


def load_or_plan(
    directory: Path, bank: str, version: int, day: str, make: Callable[[], Plan]
) -> Plan:
    """The plan's summary (its chunks' order left out: `stats` does not show it) for the bank
    `bank` at chunks `version` on `day`, from `directory`, else `make()`'s, saved there (the
    bank's files of other versions, days or rules removed)."""

    def read(text: str) -> Plan:
        row = json.loads(text)
        return Plan([], set(row["recent_chunks"]), row["bulk_chunks"], row["copies"])

    def write(made: Plan) -> str:
        recent = sorted(made.recent_chunks)
        return json.dumps({"recent_chunks": recent, "bulk_chunks": made.bulk_chunks,
                           "copies": made.copies})  # fmt: skip

    name = f"{version}-{day}-{rules()}"
    return kept(directory, f"plan-{bank}-", name, read, make, write, "plan summary")
