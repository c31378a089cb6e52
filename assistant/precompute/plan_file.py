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
import logging
from collections.abc import Callable
from functools import cache
from pathlib import Path

from assistant.home import make_private_dir, replace_atomically
from assistant.precompute import coverage
from assistant.precompute.coverage import Plan

log = logging.getLogger(__name__)


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
    path = directory / f"plan-{bank}-{version}-{day}-{rules()}.json"
    if path.exists():
        try:
            row = json.loads(path.read_text("utf-8"))
            return Plan([], set(row["recent_chunks"]), row["bulk_chunks"], row["copies"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("%s: unreadable plan summary (%s); planning again", path, exc)
    made = make()
    row = {
        "recent_chunks": sorted(made.recent_chunks),
        "bulk_chunks": made.bulk_chunks,
        "copies": made.copies,
    }
    try:
        make_private_dir(directory)
        text = json.dumps(row)
        replace_atomically(path, lambda tmp: tmp.write_text(text, "utf-8"), ".json")
        for old in directory.glob(f"plan-{bank}-*.json"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError as exc:  # a full disk or a read-only home: the statement all the same
        log.warning("%s: could not save the plan summary (%s)", path, exc)
    return made
