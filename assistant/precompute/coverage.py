"""What a night covers first: the mail people ask about (issue 33). Each mail is ranked by
recency (its age against the newest mail in the box, or `[mail] today`), the recent activity of
its thread (normalized subject where there are no thread ids), whether it is between the owner
and the people the owner writes to, and the questions already asked of its chunks; a floor of
exploration keeps a share of the nodes for chunks the ranking would leave out. The plan reads
the mail only, never a question set."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from assistant.knowledge.thread_rows import MailHeaders
from assistant.mail.threads import addresses, normalize_subject, sent_at

HALF_LIFE_DAYS = 7.0  # a mail a week older counts half as much
WINDOW_DAYS = 42  # "the last six weeks": what the plan states its coverage of
EXPLORE = 0.1  # of the planned nodes, a share drawn at random from the rest


@dataclass(frozen=True)
class Mail:
    doc_id: int
    when: datetime | None
    thread: str
    sender: frozenset[str]
    recipients: frozenset[str]


def mails_of(headers: Sequence[MailHeaders]) -> list[Mail]:
    return [
        Mail(h.doc_id, sent_at(h.date), normalize_subject(h.subject)[0] or f"doc:{h.doc_id}",
             addresses(h.sender), addresses(h.recipients, h.cc))
        for h in headers
    ]  # fmt: skip


def today_of(mails: Sequence[Mail], pinned: str = "") -> datetime | None:
    """`pinned` (an ISO date) or the newest mail's date: a mailbox read years later is still
    planned around its own last weeks."""
    if pinned:
        return sent_at(pinned)
    dated = [m.when for m in mails if m.when is not None]
    return max(dated) if dated else None


def owner(mails: Sequence[Mail]) -> str:
    """The mailbox owner's address: the one on most mails, as sender or recipient."""
    counts = Counter(a for m in mails for a in m.sender | m.recipients)
    return counts.most_common(1)[0][0] if counts else ""


def _age_days(mail: Mail, today: datetime | None) -> float:
    if mail.when is None or today is None:
        return math.inf
    return max(0.0, (today - mail.when).total_seconds() / 86400)


def mail_scores(
    mails: Sequence[Mail], today: datetime | None, me: str, asked: Mapping[int, float]
) -> dict[int, float]:
    """Each mail's worth of a node: recency × (1 + its thread's recent mails + contact), plus
    the questions (`asked`, per document) its chunks answered."""
    contacts = {a for m in mails if me in m.sender for a in m.recipients} - {me}
    recent = Counter(m.thread for m in mails if _age_days(m, today) <= WINDOW_DAYS)
    scores = {}
    for m in mails:
        recency = 0.5 ** (_age_days(m, today) / HALF_LIFE_DAYS)
        contact = me in m.sender or bool(m.sender & contacts)
        activity = math.log1p(max(recent[m.thread] - 1, 0))
        scores[m.doc_id] = recency * (1 + 0.5 * activity + 0.5 * contact) + asked.get(m.doc_id, 0)
    return scores


def order(
    chunks_of: Mapping[int, list[int]],
    scores: Mapping[int, float],
    explore: float = EXPLORE,
    seed: int = 0,
) -> Iterator[int]:
    """Chunk ids, the best mail's chunks first; every 1/`explore`-th pick instead a chunk drawn
    at random from those the ranking puts last (notes and undated mail included)."""
    docs = sorted(chunks_of, key=lambda d: (-scores.get(d, 0.0), -d))
    ranked = [c for d in docs for c in chunks_of[d]]
    rng, taken, every = random.Random(seed), set(), round(1 / explore) if explore > 0 else 0
    tail = ranked[len(ranked) // 2 :]
    rng.shuffle(tail)
    for n, chunk in enumerate(ranked, start=1):
        if every and n % every == 0:
            while tail and tail[-1] in taken:
                tail.pop()
            if tail:
                taken.add(tail[-1])
                yield tail.pop()
        if chunk not in taken:
            taken.add(chunk)
            yield chunk


def recent_docs(mails: Sequence[Mail], today: datetime | None) -> set[int]:
    """The mails of the last six weeks (what `stats` states the coverage of)."""
    return {m.doc_id for m in mails if _age_days(m, today) <= WINDOW_DAYS}


@dataclass(frozen=True)
class Plan:
    """The night's order of chunks and the mails of the last six weeks it is measured on."""

    chunks: list[int]
    recent_chunks: set[int]


def plan(
    headers: Sequence[MailHeaders],
    chunks_of: Mapping[int, list[int]],
    asked_chunks: Mapping[int, float],
    pinned_today: str = "",
) -> Plan:
    """The coverage plan from the mail's headers, each document's chunks and how many asked
    questions each chunk served."""
    mails = mails_of(headers)
    today = today_of(mails, pinned_today)
    doc_of = {c: d for d, ids in chunks_of.items() for c in ids}
    asked: Counter[int] = Counter()
    for chunk, n in asked_chunks.items():
        if chunk in doc_of:
            asked[doc_of[chunk]] += n
    scores = mail_scores(mails, today, owner(mails), asked)
    recent = {c for d in recent_docs(mails, today) for c in chunks_of.get(d, [])}
    return Plan(list(order(chunks_of, scores)), recent)


def covered(plan: Plan, with_node: set[int]) -> float:
    """The share of the last six weeks' chunks that have a node."""
    if not plan.recent_chunks:
        return 0.0
    return len(plan.recent_chunks & with_node) / len(plan.recent_chunks)


def statement(plan: Plan, with_node: set[int]) -> str:
    """What `stats` says of the plan: "covered: 38% of the last 6 weeks (310 of 809 chunks)"."""
    n = len(plan.recent_chunks & with_node)
    return (
        f"covered: {covered(plan, with_node):.0%} of the last 6 weeks "
        f"({n} of {len(plan.recent_chunks)} chunks)"
    )
