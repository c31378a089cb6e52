"""Mail that went out to many: what the night plans last (precompute/coverage.py).

- marked: its headers say so (List-Id, List-Unsubscribe, Precedence: bulk/list/junk,
  Auto-Submitted), kept at import as the row's `bulk` mark (ingest/emails.py bulk_mark);
- from a no-reply address (no-reply, donotreply, mailer-daemon, postmaster, bounces);
- mass: a chunk nearly alike (knowledge/alike.py) to chunks of MASS_SENDERS or more different
  senders: a write-in campaign, a list's quoted original, a disclaimer many senders append.

Of nearly alike chunks one node is made: where copies meet in the retriever's hits, distinct.py
keeps the one imported first, the lowest chunk id (`copies`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from assistant.knowledge import alike, distinct

MASS_SENDERS = 5  # different senders of one text that make it mass mail
_NO_REPLY = re.compile(
    r"^(?:no[-_.]?reply|do[-_.]?not[-_.]?reply|mailer[-_.]?daemon|postmaster|bounces?)"
    r"(?:[-_.+][^@]*)?@"
)


def no_reply(senders: Iterable[str]) -> bool:
    """Whether one of the (lowercased) sender addresses cannot be answered."""
    return any(_NO_REPLY.match(a) for a in senders)


@dataclass(frozen=True)
class Copies:
    """Of the nearly alike chunks: each copy's lead, whose node serves it, and the chunks of
    mass mail."""

    lead: dict[int, int]
    mass: frozenset[int]


def copies(texts: Mapping[int, str], sender_of: Mapping[int, frozenset[str]]) -> Copies:
    """The copies among `texts` (chunk id → text) and the mass mail, by the chunks' senders
    (`sender_of`: chunk id → its mail's sender addresses). A group's lead is its lowest id. In
    mass mail every other chunk of the group is a copy (a campaign letter with another name
    under it is worth no node of its own); elsewhere a chunk is a copy when it adds fewer than
    distinct.NOVEL shingles to its lead (a reply with its parent unmarked below its own line
    is not: distinct.py puts it in the prompt instead of the parent)."""
    ids = list(texts)
    lead: dict[int, int] = {}
    mass: set[int] = set()
    for group in alike.groups([texts[i] for i in ids]):
        chunks = sorted(ids[i] for i in group)
        senders = {a for c in chunks for a in sender_of.get(c, ())}
        if len(senders) >= MASS_SENDERS:
            mass.update(chunks)
            lead.update((c, chunks[0]) for c in chunks[1:])
            continue
        first = distinct.shape(texts[chunks[0]])
        for c in chunks[1:]:
            if distinct.novel(distinct.shape(texts[c]), first) < distinct.NOVEL:
                lead[c] = chunks[0]
    return Copies(lead, frozenset(mass))
