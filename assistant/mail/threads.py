"""Threads: which mails belong together, and the thread_id each is stored with.

First the reply headers: a mail, its In-Reply-To and every id of its References are one thread
(a parent missing from the home still joins its replies). Mail without them (most of an Outlook
or Lotus Notes export) is joined by its subject: a reply or forward (Re:, Fwd:, AW: … stripped)
joins the latest thread of the same subject whose last mail is at most WINDOW older and that
shares a participant with it (the mailbox owner's own addresses, on most mails, do not count);
a reply whose headers name a stored mail is not moved by its subject.
This decides; assistant/mail/thread_update.py computes and stores, after an import only where
mail changed.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from itertools import chain

from assistant.ingest.emails import display_name
from assistant.knowledge.thread_rows import MailHeaders, ThreadMail
from assistant.mail import thread_ids
from assistant.mail.quoted import fold, line_set

WINDOW = timedelta(days=30)
# the rules threads are found by: changed with anything below that places a mail otherwise (a
# prefix, the window, a share), so that a home's threads are computed again in full
RULES = "1"
# an address on at least this share of the mails is the owner's (or a list's): shared by all
OWNER_SHARE = 0.2
# reply and forward prefixes, as mail clients write them in their languages (Thunderbird's and
# Outlook's lists): "Re", "AW"/"WG", "SV"/"VS", "TR"/"Réf", "RV", "RES"/"ENC", "Odp"/"PD", ...
_PREFIXES = (
    "re|fw|fwd|aw|wg|sv|vs|tr|antw|antwort|doorst|rif|r|réf|rv|res|enc|odp|pd|ynt|vl|vá|"
    "отв|ответ|απ|σχετ|回复|答复|转发|回覆|轉寄|返信|転送|회신|전달"
)
_PREFIX = re.compile(rf"^\s*(?:{_PREFIXES})\s*(?:\[\d+\]|\(\d+\))?\s*[:：]\s*", re.IGNORECASE)
_LIST_TAG = re.compile(r"^\s*\[[^\[\]]{1,40}\]\s*")  # "[smu-betas] "
_NO_SUBJECT = {"", "(no subject)", "no subject"}


@lru_cache(maxsize=1 << 16)  # a subject recurs in its thread and its replies: read once
def normalize_subject(subject: str) -> tuple[str, bool]:
    """('more tickets for friday night...', True) for 'RE: Fwd: More tickets for Friday
    night...': the subject without reply and forward prefixes, lowercased, and whether it had
    one. A missing subject normalizes to ''."""
    text, reply = subject or "", False
    while True:
        cut = _PREFIX.sub("", text, count=1)
        reply |= cut != text
        cut = _LIST_TAG.sub("", cut, count=1)
        if cut == text:
            break
        text = cut
    norm = " ".join(text.lower().split())
    return ("" if norm in _NO_SUBJECT else norm), reply


class _Groups:
    """Union-find over string keys."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, key: str) -> str:
        self.parent.setdefault(key, key)
        root = key
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[key] != root:
            self.parent[key], key = root, self.parent[key]
        return root

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def sent_at(iso: str) -> datetime | None:
    """A mail's ISO date as an aware datetime (UTC where it names no zone); None where it has
    none or it does not parse. Threads order by it; the precompute's coverage reads it too."""
    try:
        date = datetime.fromisoformat(iso) if iso else None
    except ValueError:
        return None
    if date is not None and date.tzinfo is None:
        date = date.replace(tzinfo=UTC)
    return date


_ADDRESS = re.compile(r"[\w.+'-]+@[\w-]+(?:\.[\w-]+)+")


def addresses(*fields: str) -> frozenset[str]:
    """The lowercased addresses in header fields (a regex, not email.utils: a long To line of
    a list mail costs getaddresses milliseconds); a field without one gives its names."""
    found = set()
    for value in fields:
        hits = _ADDRESS.findall(value or "")
        found.update(h.lower() for h in hits)
        if not hits:
            found.update(n.strip().lower() for n in (value or "").split(",") if n.strip())
    return frozenset(found)


def _doc(m: MailHeaders) -> str:
    return f"d{m.doc_id}"


def _mail_key(m: MailHeaders | ThreadMail) -> str:
    """One key for the copies of a mail (they share its Message-ID)."""
    return m.message_id or f"d{m.doc_id}"


def link_headers(mails: Sequence[MailHeaders], groups: _Groups) -> set[int]:
    """Join each mail with its Message-ID, In-Reply-To and References; return the mails that
    named a parent."""
    linked = set()
    for m in mails:
        if m.message_id:
            groups.union(_doc(m), f"m{m.message_id}")
        parents = [p for p in (m.in_reply_to, *m.refs) if p and p != m.message_id]
        for parent in parents:
            groups.union(_doc(m), f"m{parent}")
        if parents:
            linked.add(m.doc_id)
    return linked


@dataclass
class _Open:
    """A thread a later reply of the same subject may join."""

    root: str
    last: datetime
    people: set[str]


@dataclass(frozen=True)
class Participants:
    """Whom each mail is between, and the owner's addresses (on so many mails that they are
    shared by all: left out where others are shared)."""

    of: dict[int, frozenset[str]]
    owners: set[str]
    counts: Counter[str]  # on how many of the mails each address is (when owners were found)


def participants(mails: Sequence[MailHeaders], owners: set[str] | None = None) -> Participants:
    """The participants of `mails`; the owners among them unless given (those of a whole
    mailbox, when `mails` are part of it)."""
    of = {m.doc_id: addresses(m.sender, m.recipients, m.cc) for m in mails}
    if owners is not None:
        return Participants(of, owners, Counter())
    counts = Counter(chain.from_iterable(of.values()))
    floor = owner_floor(len(mails))
    return Participants(of, {a for a, n in counts.items() if n >= floor}, counts)


def owner_floor(mails: int) -> float:
    """On how many of `mails` an address must be to be the owner's."""
    return max(5, OWNER_SHARE * mails)


def link_subjects(
    mails: Sequence[MailHeaders], groups: _Groups, window: timedelta, who: Participants
) -> set[str]:
    """Join replies without headers to the latest open thread of their subject; return the
    roots of the groups a subject joined. A mail whose headers name a stored mail is where they
    put it: it only keeps its own thread open to later replies of its subject."""
    people_of, owners = who.of, who.owners
    placed = _placed(mails)
    open_by_subject: dict[str, list[_Open]] = defaultdict(list)
    joined: set[str] = set()
    dated = [(d, m) for m in mails if (d := sent_at(m.date)) is not None]
    for date, m in sorted(dated, key=lambda pair: (pair[0], pair[1].doc_id)):
        norm, reply = normalize_subject(m.subject)
        if not norm:
            continue
        people = people_of[m.doc_id]
        root = groups.find(_doc(m))
        # mails come oldest first: a thread quiet for longer than `window` takes no reply again
        opens = open_by_subject[norm] = [
            t for t in open_by_subject[norm] if date - t.last <= window
        ]
        if m.doc_id in placed:
            target = next((t for t in reversed(opens) if groups.find(t.root) == root), None)
        else:
            target = _match(opens, date, people, owners, window) if reply else None
        if target is not None and groups.find(target.root) != root:
            groups.union(target.root, root)
            joined.add(groups.find(root))
        if target is None:
            target = _Open(root, date, set())
            opens.append(target)
        target.last, target.people = max(target.last, date), target.people | people
    return {groups.find(r) for r in joined}


def _placed(mails: Sequence[MailHeaders]) -> set[int]:
    """The mails whose In-Reply-To or References name another stored mail: a late reply to an
    older thread is not joined by its subject to a newer one (a parent not in the home leaves
    a reply free to join by subject, as JWZ's threading joins such roots)."""
    stored = {m.message_id for m in mails if m.message_id}
    return {
        m.doc_id
        for m in mails
        if any(p in stored and p != m.message_id for p in (m.in_reply_to, *m.refs))
    }


def _match(
    candidates: list[_Open], date: datetime, people: set[str], owners: set[str], window
) -> _Open | None:
    for thread in reversed(candidates):
        if timedelta(0) <= date - thread.last <= window and _share(thread.people, people, owners):
            return thread
    return None


def _share(a: set[str], b: set[str], owners: set[str]) -> bool:
    """Whether two sets of participants share one, the owner's addresses aside (unless one set
    holds nothing else)."""
    a_own, b_own = a - owners, b - owners
    if a_own and b_own:
        return bool(a_own & b_own)
    return bool(a & b)


@dataclass(frozen=True)
class Placed:
    threads: dict[int, tuple[str, str | None]]  # each mail's (thread_id, how it was found)
    merged: dict[str, str]  # the ids of threads merged into another → the id kept


def assign(
    mails: Sequence[MailHeaders],
    window: timedelta = WINDOW,
    taken: Callable[[str], bool] = lambda _: False,
    who: Participants | None = None,
) -> Placed:
    """Each mail's (thread_id, how it was found: 'headers' | 'subject' | None when alone). A
    thread keeps the id its mails are stored with; a new one is named by its first mail
    (assistant/mail/thread_ids.py; `taken`: the ids it may not have). `who`: the mails'
    participants (by default, with the owners of `mails`)."""
    groups = _Groups()
    linked = link_headers(mails, groups)
    header_roots = {groups.find(f"d{d}") for d in linked}
    subject_roots = link_subjects(mails, groups, window, who or participants(mails))
    header_roots = {groups.find(r) for r in header_roots}
    members: dict[str, list[MailHeaders]] = defaultdict(list)
    for m in mails:
        members[groups.find(_doc(m))].append(m)
    names, merged = thread_ids.name(list(members.values()), _order, taken)
    out: dict[int, tuple[str, str | None]] = {}
    for (root, group), thread_id in zip(members.items(), names, strict=True):
        by = None
        if len(group) > 1:
            by = "headers" if root in header_roots else "subject" if root in subject_roots else None
            by = by or "headers"  # copies of one mail share its Message-ID
        for m in group:
            out[m.doc_id] = (thread_id, by)
    return Placed(out, merged)


def _order(m: MailHeaders) -> tuple[datetime, int]:
    return (sent_at(m.date) or datetime.max.replace(tzinfo=UTC), m.doc_id)


def ordered(mails: Iterable) -> list:
    """Mails (anything with .date, .doc_id) oldest first; undated last."""
    never = datetime.max.replace(tzinfo=UTC)
    return sorted(mails, key=lambda m: (sent_at(m.date) or never, m.doc_id))


def mail_line(mail: ThreadMail) -> str:
    """sender · date · subject."""
    return " · ".join([display_name(mail.sender) or "?", mail.date[:10] or "undated", mail.subject])


def render(mails: Sequence[ThreadMail]) -> list[str]:
    """A thread as `assistant thread` prints it: one line per mail (copies of one mail, one
    Message-ID, once: the first stored), then each mail's own text with the lines it repeats
    from an earlier mail of the thread folded."""
    copies: dict[str, list[ThreadMail]] = {}
    for m in ordered(mails):
        copies.setdefault(_mail_key(m), []).append(m)
    shown = [same[0] for same in copies.values()]
    if not shown:
        return []
    lines = [f"Thread {shown[0].thread_id} · {len(shown)} mail{'s' * (len(shown) != 1)}"]
    for i, mail in enumerate(shown, 1):
        n = len(copies[_mail_key(mail)])
        lines.append(f"{i:>3}. {mail_line(mail)}{f' ({n} copies)' if n > 1 else ''}")
    for i, mail in enumerate(shown):
        earlier = line_set(m.body for m in shown[:i])
        ident = f" <{mail.message_id}>" if mail.message_id else ""
        lines += ["", f"── {i + 1}. {mail_line(mail)}{ident}", ""]
        lines.append(fold(mail.body, earlier) or "(no text of its own)")
    return lines
