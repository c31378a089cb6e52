"""The paths `assistant import` with no path reads again (and the night's re-import): the
remembered ones there now; those not there, kept, since mail or notes stored are still from them
(a drive not mounted must lose nothing, and is read again once back); and those not there whose
mail and notes all moved away and were followed (a notes folder moved and imported from its new
place), forgotten, or they would be said to be missing at every import from then on.

Nothing stored is removed here. A path is forgotten only when it is gone and nothing stored is
from it, the stored paths and the remembered one compared resolved (KnowledgeStore.stored_under).
One that cannot be looked at now (a folder on the way another user's, a share's permissions:
Path.exists() raises there rather than answer) is kept and said, not read, never the end of the
import.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from assistant.importing.import_sweep import gone
from assistant.knowledge.sources import SourceLog
from assistant.knowledge.store import KnowledgeStore

log = logging.getLogger(__name__)


@dataclass
class Remembered:
    there: list[Path] = field(default_factory=list)  # to read again
    away: list[Path] = field(default_factory=list)  # not there now; what it held is kept
    forgotten: list[Path] = field(default_factory=list)  # not there, nothing stored from it
    unreadable: list[Path] = field(default_factory=list)  # cannot be looked at now; kept


def remembered(store: KnowledgeStore) -> Remembered:
    """The remembered paths, sorted as above; those forgotten are no longer remembered."""
    sources, found = SourceLog(store.db), Remembered()
    for path in sources.paths():
        try:
            there = path.exists()
        except OSError as exc:
            found.unreadable.append(path)
            log.warning("%s cannot be looked at now (%s): kept, not read", path, exc)
            continue
        if there:
            found.there.append(path)
        elif gone(str(path)) and not store.stored_under(path):
            sources.forget(path)
            found.forgotten.append(path)
            log.info("forgot %s: not there, and nothing stored is from it now", path)
        else:
            found.away.append(path)
    return found
