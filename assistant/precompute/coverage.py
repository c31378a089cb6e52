"""What the night has covered of the mail people ask about: the share of the chunks of the last
weeks' mail (counted back from the newest mail, or a pinned today) whose [system, chunk] KV node
is in the tree, so a question reading them restores them instead of prefilling."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from assistant.knowledge.store import KnowledgeStore
from assistant.prompt_cache import PromptCache

WEEKS = 6


@dataclass(frozen=True)
class Coverage:
    covered: int
    chunks: int
    since: str  # the first day counted (YYYY-MM-DD)

    @property
    def share(self) -> float:
        return self.covered / self.chunks if self.chunks else 0.0

    def summary(self) -> str:
        weeks = f"the last {WEEKS} weeks (since {self.since})"
        return f"{self.share:.0%} of {weeks}: {self.covered} of {self.chunks} chunks"


def coverage(store: KnowledgeStore, cache: PromptCache, today: str = "") -> Coverage:
    """The chunk nodes the tree holds for mail dated in the WEEKS before `today` (default: the
    newest mail's day)."""
    dated = [(i, d[:10]) for i, d in store.mail.recent_chunk_ids() if d[:10]]
    if not dated:
        return Coverage(0, 0, "")
    end = date.fromisoformat(today) if today else max(_day(d) for _, d in dated)
    since = end - timedelta(weeks=WEEKS)
    ids = [i for i, d in dated if since <= _day(d) <= end]
    records = store.chunk_records(ids)
    covered = sum(cache.kv_cached([r.text]) for r in records)
    return Coverage(covered, len(records), since.isoformat())


def _day(text: str) -> date:
    try:
        return datetime.fromisoformat(text).date()
    except ValueError:
        return date.min
