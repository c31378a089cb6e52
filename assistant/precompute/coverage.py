"""What a night covers first: the mail people ask about (issue 33). Each mail is ranked by
recency (its age against the newest mail in the box, or `[mail] today`), the recent activity of
its thread (normalized subject where there are no thread ids) when the owner took part in it,
whether it is between the owner and the people the owner writes to, and the questions already
asked of its chunks; a floor of exploration keeps a share of the nodes for chunks the ranking
would leave out. The plan reads the mail only, never a question set.

Bulk mail last (issue 47): list, bulk and no-reply mail and mass mail (mail/bulk.py: a text
that many senders sent nearly alike, and the rest of its thread when the owner never took part
in it) count as a person's mail WINDOW_DAYS older, without a thread's or a contact's lift, and
are never drawn to explore: a week's newsletters or a write-in campaign come after the last six
weeks' correspondence. Of copies of one text (nearly alike chunks) one is planned, in the best
place of its group, the others after all else. Finding them reads the last six weeks' texts
only, with no comparison of all pairs (knowledge/alike.py)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from assistant.knowledge.thread_rows import MailHeaders
from assistant.mail import bulk
from assistant.mail.threads import addresses, normalize_subject, sent_at

HALF_LIFE_DAYS = 7.0  # a mail a week older counts half as much
WINDOW_DAYS = 42  # "the last six weeks": what the plan states its coverage of
EXPLORE = 0.1  # of the planned nodes, a share drawn at random from the rest
BULK = 0.5 ** (WINDOW_DAYS / HALF_LIFE_DAYS)  # bulk mail's worth: a person's mail six weeks older


@dataclass(frozen=True)
class Mail:
    doc_id: int
    when: datetime | None
    thread: str
    sender: frozenset[str]
    recipients: frozenset[str]
    bulk: bool = False  # marked at import as list or bulk mail, or from a no-reply address


def mails_of(headers: Sequence[MailHeaders]) -> list[Mail]:
    out = []
    for h in headers:
        sender = addresses(h.sender)
        thread = normalize_subject(h.subject)[0] or f"doc:{h.doc_id}"
        marked = bool(h.bulk) or bulk.no_reply(sender)
        out.append(Mail(h.doc_id, sent_at(h.date), thread, sender,
                        addresses(h.recipients, h.cc), marked))  # fmt: skip
    return out


def today_of(
    mails: Sequence[Mail], pinned: str = "", now: datetime | None = None
) -> datetime | None:
    """`pinned` (an ISO date) or the newest mail's date: a mailbox read years later is still
    planned around its own last weeks. A date past tomorrow (a spam's, a device's wrong clock:
    "2099") is no mail's sending day, and would leave the last six weeks holding it alone."""
    if pinned:
        return sent_at(pinned)
    latest = (now or datetime.now(UTC)) + timedelta(days=1)
    dated = [m.when for m in mails if m.when is not None and m.when <= latest]
    return max(dated) if dated else None


def owner(mails: Sequence[Mail]) -> str:
    """The mailbox owner's address: the one on most mails, as sender or recipient."""
    counts = Counter(a for m in mails for a in m.sender | m.recipients)
    return counts.most_common(1)[0][0] if counts else ""


def _age_days(mail: Mail, today: datetime | None) -> float:
    if mail.when is None or today is None:
        return math.inf
    return max(0.0, (today - mail.when).total_seconds() / 86400)


@dataclass(frozen=True)
class Owner:
    """The mailbox owner, the people the owner writes to and the threads the owner wrote in."""

    me: str
    contacts: frozenset[str]
    threads: frozenset[str]

    def contact(self, mail: Mail) -> bool:
        return self.me in mail.sender or bool(mail.sender & self.contacts)

    def joined(self, mail: Mail) -> bool:
        """The owner wrote in its thread, or it is between the owner and a contact."""
        return mail.thread in self.threads or self.contact(mail)


def owner_of(mails: Sequence[Mail]) -> Owner:
    me = owner(mails)
    sent = [m for m in mails if me in m.sender]
    contacts = frozenset(a for m in sent for a in m.recipients) - {me}
    return Owner(me, contacts, frozenset(m.thread for m in sent))


def mail_scores(
    mails: Sequence[Mail],
    today: datetime | None,
    who: Owner,
    asked: Mapping[int, float],
    mass: Collection[int] = frozenset(),
) -> dict[int, float]:
    """Each mail's worth of a node: recency × (1 + its thread's recent mails, if the owner
    joined it, + contact), or for bulk mail (and the `mass` documents) recency × BULK, plus the
    questions (`asked`, per document) its chunks answered."""
    recent = Counter(m.thread for m in mails if _age_days(m, today) <= WINDOW_DAYS)
    scores = {}
    for m in mails:
        if m.bulk or m.doc_id in mass:
            scores[m.doc_id] = bulk_score(m, today, asked)
            continue
        recency = 0.5 ** (_age_days(m, today) / HALF_LIFE_DAYS)
        activity = math.log1p(max(recent[m.thread] - 1, 0)) if who.joined(m) else 0.0
        lift = 1 + 0.5 * activity + 0.5 * who.contact(m)
        scores[m.doc_id] = recency * lift + asked.get(m.doc_id, 0)
    return scores


def bulk_score(mail: Mail, today: datetime | None, asked: Mapping[int, float]) -> float:
    return 0.5 ** (_age_days(mail, today) / HALF_LIFE_DAYS) * BULK + asked.get(mail.doc_id, 0)


def order(
    ranked: Sequence[int],
    explore: float = EXPLORE,
    seed: int = 0,
    unexplored: Collection[int] = frozenset(),
    last: Collection[int] = frozenset(),
) -> Iterator[int]:
    """`ranked` (best first) but the chunks in `last`, each 1/`explore`-th pick instead a chunk
    drawn at random from those the ranking puts in its second half (notes and undated mail
    included; `unexplored` ones never), then the chunks in `last`, in their ranked order. The
    draw is a fixed shuffle of chunk ids, so new mail does not redraw the older chunks."""
    first = [c for c in ranked if c not in last]
    taken, every = set(), round(1 / explore) if explore > 0 else 0
    tail = [c for c in first[len(first) // 2 :] if c not in unexplored]
    tail.sort(key=lambda c: ((c ^ seed) * 0x9E3779B1) % 2**32, reverse=True)
    for n, chunk in enumerate(first, start=1):
        if every and n % every == 0:
            while tail and tail[-1] in taken:
                tail.pop()
            if tail:
                taken.add(tail[-1])
                yield tail.pop()
        if chunk not in taken:
            taken.add(chunk)
            yield chunk
    yield from (c for c in ranked if c in last)


def recent_docs(mails: Sequence[Mail], today: datetime | None) -> set[int]:
    """The mails of the last six weeks (what `stats` states the coverage of)."""
    return {m.doc_id for m in mails if _age_days(m, today) <= WINDOW_DAYS}


@dataclass(frozen=True)
class Plan:
    """The night's order of chunks, the mails of the last six weeks it is measured on, and how
    many chunks it plans last: of bulk mail, and copies of a chunk planned in their place."""

    chunks: list[int]
    recent_chunks: set[int]
    bulk_chunks: int = 0
    copies: int = 0


Texts = Callable[[Sequence[int]], Mapping[int, str]]  # documents → their chunks' texts by id


def plan(
    headers: Sequence[MailHeaders],
    chunks_of: Mapping[int, list[int]],
    asked_chunks: Mapping[int, float],
    pinned_today: str = "",
    texts: Texts | None = None,
) -> Plan:
    """The coverage plan from the mail's headers, each document's chunks, how many asked
    questions each chunk served, and (`texts`) the last six weeks' chunk texts, which find
    copies and mass mail."""
    mails = mails_of(headers)
    today = today_of(mails, pinned_today)
    doc_of = {c: d for d, ids in chunks_of.items() for c in ids}
    asked: Counter[int] = Counter()
    for chunk, n in asked_chunks.items():
        if chunk in doc_of:
            asked[doc_of[chunk]] += n
    recent_mail = recent_docs(mails, today)
    found = _copies(mails, sorted(recent_mail), doc_of, texts)
    scores, low = _chunk_scores(mails, today, asked, doc_of, found)
    ranked = sorted(doc_of, key=lambda c: (-scores[c], -doc_of[c], c))
    last = set(found.lead)
    recent = {c for d in recent_mail for c in chunks_of.get(d, [])}
    chunks = list(order(ranked, unexplored=low, last=last))
    return Plan(chunks, recent, len(low - last), len(last))


def _copies(
    mails: Sequence[Mail], docs: Sequence[int], doc_of: Mapping[int, int], texts: Texts | None
) -> bulk.Copies:
    if texts is None or not docs:
        return bulk.Copies({}, frozenset())
    sender = {m.doc_id: m.sender for m in mails}
    found = texts(docs)
    return bulk.copies(found, {c: sender.get(doc_of.get(c, -1), frozenset()) for c in found})


def _chunk_scores(
    mails: Sequence[Mail],
    today: datetime | None,
    asked: Mapping[int, float],
    doc_of: Mapping[int, int],
    found: bulk.Copies,
) -> tuple[dict[int, float], set[int]]:
    """Each chunk's worth (its mail's; a mass chunk's as bulk mail's; a group's lead the best
    of its group's), and the chunks at bulk mail's worth."""
    by_doc = {m.doc_id: m for m in mails}
    who = owner_of(mails)
    mass = _mass_mail(mails, who, {doc_of[c] for c in found.mass})
    docs = mail_scores(mails, today, who, asked, mass)
    scores = {c: docs.get(d, 0.0) for c, d in doc_of.items()}
    low = {c for c, d in doc_of.items() if d in mass or (d in by_doc and by_doc[d].bulk)}
    for c in found.mass:
        scores[c] = min(scores[c], bulk_score(by_doc[doc_of[c]], today, asked))
    low |= found.mass
    for c, lead in found.lead.items():
        scores[lead] = max(scores[lead], scores[c])
    return scores, low


def _mass_mail(mails: Sequence[Mail], who: Owner, with_mass: set[int]) -> set[int]:
    """The mails of a thread with mass chunks that the owner never took part in: a campaign
    letter that a sender reworded past being found alike is still in its campaign's thread."""
    threads = {m.thread for m in mails if m.doc_id in with_mass}
    return {m.doc_id for m in mails if m.thread in threads and not who.joined(m)}


def covered(plan: Plan, with_node: set[int]) -> float:
    """The share of the last six weeks' chunks that have a node."""
    if not plan.recent_chunks:
        return 0.0
    return len(plan.recent_chunks & with_node) / len(plan.recent_chunks)


def statement(plan: Plan, with_node: set[int]) -> str:
    """What `stats` says of the plan: "covered: 38% of the last 6 weeks (310 of 809 chunks)",
    and where it put mail last, "; planned last: 214 chunks of bulk mail, 2,364 copies"."""
    n = len(plan.recent_chunks & with_node)
    said = (
        f"covered: {covered(plan, with_node):.0%} of the last 6 weeks "
        f"({n} of {len(plan.recent_chunks)} chunks)"
    )
    if plan.bulk_chunks or plan.copies:
        said += f"; planned last: {plan.bulk_chunks:,} chunks of bulk mail, {plan.copies:,} copies"
    return said
