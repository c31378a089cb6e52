"""Threads computed and stored: every mail's (`rebuild`: `assistant threads --rebuild`, a home
whose threads were found by other rules), or after an import only where mail changed (`update`).

A mail added, removed or changed (the triggers note it: knowledge/db.py _THREAD_CHANGES) can
only move mail that shares its subject (normalized), a reply header id, or the thread it was in,
and so on from those: threads join by nothing else. Those mails, computed again with the owners
of the whole mailbox (threads.Participants), come out as computing every thread would, and the
others stay as they were (tests/assistant/mail/test_thread_update.py checks the two alike over
random imports and removals). Every thread is computed again when the owners changed (an
address crossed OWNER_SHARE of the mails, which moves subject joins anywhere) or the change
reaches more than WHOLE of the mail.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from assistant.knowledge.store import KnowledgeStore
from assistant.knowledge.thread_index import Change
from assistant.knowledge.thread_rows import MailHeaders
from assistant.mail.quoted import repeated_chunks
from assistant.mail.threads import (
    RULES,
    WINDOW,
    Placed,
    addresses,
    assign,
    normalize_subject,
    ordered,
    owner_floor,
    participants,
)

# Off by default: taking the repeated chunks out moved the demo questions' hybrid recall@10 of
# the int8 encoder from 108 to 106 of 121 (tests/assistant/knowledge/test_demo_retrieval.py),
# under the floor the encoder's default was given; `assistant threads --rebuild` still folds them
# when a thread is printed. Measured before it is turned on.
DROP_REPEATS = False
WHOLE = 0.5  # a change that reaches more of the mail has every thread computed

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ThreadReport:
    mails: int  # the mails whose threads were computed (every mail, or those a change reached)
    threads: int  # of their threads, those of at least two mails
    by_headers: int  # of those, found from reply headers
    by_subject: int  # found from the subject alone
    changed: int  # mails whose thread_id changed
    chunks_dropped: int  # chunks that only repeated another mail of their thread
    seconds: float
    whole: bool = True  # every thread computed (else only those mail changed)


def update(store: KnowledgeStore, window=WINDOW, drop_repeats=DROP_REPEATS) -> ThreadReport | None:
    """Compute the threads mail changed since they were last computed (None: nothing did)."""
    if not store.threads_due(RULES):
        return None
    if store.threads_rules() == RULES:
        t0 = time.perf_counter()
        with store.transaction():  # read and written at once: no change slips between
            done = _changed(store, window)
        if done is not None:
            return _report(store, *done, drop_repeats, t0, whole=False)
    return rebuild(store, window, drop_repeats)


def rebuild(store: KnowledgeStore, window=WINDOW, drop_repeats=DROP_REPEATS) -> ThreadReport:
    """Compute every mail's thread and store it; then (with `drop_repeats`) take out of the
    index the chunks that only repeat an earlier mail of their thread (the whole text stays).
    Computed outside the write lock: where threads were stored meanwhile (another process),
    only what changed since is computed."""
    t0 = time.perf_counter()
    with store.transaction():  # the mail and the changes noted as of one moment
        mails, changes = store.mail_headers(), store.thread_changes()
        epoch = store.threads_epoch()
    who = participants(mails)
    placed = assign(mails, window, store.merged_ids().__contains__, who)
    with store.transaction():
        stored = store.threads_epoch() == epoch
        if stored:
            changed = store.put_threads(placed.threads, placed.merged)
            _put_index(store, mails, placed, who.counts, who.owners, whole=True)
            store.mark_threads_done(RULES, _last(changes))
    if not stored:
        log.info("threads were stored meanwhile; computing what changed since")
        return update(store, window, drop_repeats) or _report(store, [], None, 0, False, t0)
    return _report(store, mails, placed, changed, drop_repeats, t0, whole=True)


def ensure(store: KnowledgeStore) -> ThreadReport | None:
    """Compute threads when mail changed since they were last computed (an existing home on
    first open, a home another process imported into)."""
    try:
        return update(store)
    except sqlite3.OperationalError as exc:  # locked for long, or a read-only copy: next open
        log.warning("threads not computed now (%s); they are on the next open", exc)
        return None


def _changed(store: KnowledgeStore, window) -> tuple[list[MailHeaders], Placed, int] | None:
    """The threads the noted changes reach, computed and stored: those mails, their threads,
    how many mails changed thread. None (nothing stored) where every thread must be computed."""
    changes = store.thread_changes()
    before, after = _touched(store, changes)
    delta = _people_delta(before.values(), after.values())
    owners = _owners_now(store, delta)
    if owners != store.stored_owners():
        return None
    mails = _reach(store, before.values(), after.values(), WHOLE * store.email_count())
    if mails is None:
        return None
    placed = assign(mails, window, store.thread_exists, participants(mails, owners))
    changed = store.put_threads(placed.threads, placed.merged)
    _put_index(store, mails, placed, delta, owners, whole=False)
    store.mark_threads_done(RULES, _last(changes))
    return mails, placed, changed


def _touched(
    store: KnowledgeStore, changes: Sequence[Change]
) -> tuple[dict[int, Change], dict[int, MailHeaders]]:
    """Each changed mail as it was when threads were computed (its first change, unless it was
    added since) and as it is now (unless removed since)."""
    before: dict[int, Change] = {}
    first: set[int] = set()
    for c in changes:
        if c.doc_id not in first:
            first.add(c.doc_id)
            if c.change != "added":
                before[c.doc_id] = c
    after = {m.doc_id: m for m in store.mails_where("id", first)}
    return before, after


def _people_delta(before: Iterable[Change], after: Iterable[MailHeaders]) -> Counter[str]:
    """How many mails more (or fewer) each address is on."""
    delta: Counter[str] = Counter()
    for c in before:
        delta.subtract(addresses(c.sender, c.recipients, c.cc))
    for m in after:
        delta.update(addresses(m.sender, m.recipients, m.cc))
    return delta


def _owners_now(store: KnowledgeStore, delta: Counter[str]) -> set[str]:
    """The owners of the whole mailbox, from the stored counts and what changed."""
    floor = owner_floor(store.email_count())
    gain = max([0, *delta.values()])
    counts = store.people_counts(int(floor - gain), delta)
    return {a for a, n in counts.items() if n + delta.get(a, 0) >= floor}


def _reach(
    store: KnowledgeStore, before: Iterable[Change], after: Iterable[MailHeaders], most: float
) -> list[MailHeaders] | None:
    """The mails a change can move: the changed mails, those sharing a subject or a reply header
    id with them, those of the threads they were in, and so on; None past `most`."""
    found: dict[int, MailHeaders] = {}
    threads = {c.thread_id for c in before if c.thread_id}
    subjects = {normalize_subject(c.title)[0] for c in before}
    ids = {i for m in after for i in (m.message_id, m.in_reply_to, *m.refs) if i}
    new = list(after)
    seen_threads, seen_subjects = set(), set()
    while new or threads or subjects or ids:
        threads |= store.threads_naming(ids)
        new += store.mails_where("message_id", ids)
        new += store.mails_where("thread_id", threads)
        new += store.mails_where("subject_key", subjects - {""})
        seen_threads |= threads
        seen_subjects |= subjects
        threads, subjects, ids = set(), set(), set()
        for m in new:
            if m.doc_id in found:
                continue
            found[m.doc_id] = m
            if m.thread_id and m.thread_id not in seen_threads:
                threads.add(m.thread_id)
            subject = normalize_subject(m.subject)[0]
            if subject not in seen_subjects:
                subjects.add(subject)
        new = []
        if len(found) > most:
            return None
    return list(found.values())


def _put_index(
    store: KnowledgeStore,
    mails: Sequence[MailHeaders],
    placed: Placed,
    people: Counter[str],
    owners: set[str],
    whole: bool,
) -> None:
    keys = ((m, normalize_subject(m.subject)[0]) for m in mails)
    subjects = {m.doc_id: key for m, key in keys if m.subject_key != key}
    refs = {
        ref: placed.threads[m.doc_id][0] for m in mails for ref in (m.in_reply_to, *m.refs) if ref
    }
    store.put_index(subjects, refs, people, owners, whole)


def _last(changes: Sequence[Change]) -> int:
    return changes[-1].id if changes else 0


def _report(
    store: KnowledgeStore,
    mails: Sequence[MailHeaders],
    placed: Placed | None,
    changed: int,
    drop_repeats: bool,
    t0: float,
    whole: bool = True,
) -> ThreadReport:
    assigned = placed.threads if placed is not None else {}
    dropped = drop_repeated(store, assigned) if drop_repeats else 0
    # a thread's mails, copies of one mail (one Message-ID: a Sent and a list's copy) once
    keys = {(assigned[m.doc_id], m.message_id or f"d{m.doc_id}") for m in mails}
    sizes = Counter(thread for thread, _ in keys)
    report = ThreadReport(
        len(mails),
        sum(1 for (_, by), n in sizes.items() if n > 1),
        sum(1 for (_, by), n in sizes.items() if n > 1 and by == "headers"),
        sum(1 for (_, by), n in sizes.items() if n > 1 and by == "subject"),
        changed,
        dropped,
        time.perf_counter() - t0,
        whole,
    )
    log.info("threads computed: %s", report)
    return report


def drop_repeated(store: KnowledgeStore, assigned: dict[int, tuple[str, str | None]]) -> int:
    """Drop the chunks of threads of two mails or more that repeat an earlier mail's text."""
    threads = {t for t, by in assigned.values() if by is not None}
    drop: list[int] = []
    for batch in _batches(sorted(threads), 500):
        mails = store.mails_in_threads(batch)
        by_thread = defaultdict(list)
        for mail in mails:
            by_thread[mail.thread_id].append(mail)
        chunks = store.chunks_of([m.doc_id for m in mails])
        for thread in by_thread.values():
            ids = {m.doc_id for m in thread}
            drop += repeated_chunks(ordered(thread), [c for c in chunks if c[1] in ids])
    store.drop_chunks(drop)
    return len(drop)


def _batches(items: list[str], size: int) -> Iterable[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
