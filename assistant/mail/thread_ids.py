"""Which id each thread goes by: the id a user was shown (`thread` in `--json`, the first line
of `assistant thread`, a `thread:` term they typed) keeps naming their thread when mail is
added or removed.

A thread keeps the id its mails were stored with: an older mail joining a thread takes the
thread's id, it does not give it its own. Where threads merge, the id of the one with the
earliest mail is kept and the other's is recorded as merged into it (it still finds the
thread); where a thread splits (a mail that joined its parts removed), the part with the
earliest mail that had the id keeps it and the other is named anew. A new thread is named by
its first mail (by date): its Message-ID, else `doc<id>`, unless some thread has or had that
name.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from assistant.knowledge.thread_rows import MailHeaders

Order = Callable[[MailHeaders], Any]  # oldest first (assistant/mail/threads.py `_order`)


def name(
    groups: Sequence[Sequence[MailHeaders]],
    order: Order,
    taken: Callable[[str], bool] = lambda _: False,
) -> tuple[list[str], dict[str, str]]:
    """Each group's thread id, and the ids merged into another (id → the id kept). A mail's
    `thread_id` is the id it is stored with ('' for one not threaded yet); `taken`: an id no
    new thread may have (a thread's outside `groups`, or one merged before)."""
    anchors: dict[str, tuple[Any, int]] = {}  # id → the earliest mail that has it, its group
    for i, group in enumerate(groups):
        for m in group:
            if not m.thread_id:
                continue
            first, held = order(m), anchors.get(m.thread_id)
            if held is None or first < held[0]:
                anchors[m.thread_id] = (first, i)
    kept: dict[int, list[tuple[Any, str]]] = defaultdict(list)
    for thread_id, (first, i) in anchors.items():
        kept[i].append((first, thread_id))
    names, merged = [""] * len(groups), {}
    for i, ids in kept.items():
        ids.sort()
        names[i] = ids[0][1]
        merged.update((thread_id, names[i]) for _, thread_id in ids[1:])
    used = set(anchors)
    for i, group in enumerate(groups):
        if not names[i]:
            names[i] = _new(sorted(group, key=order), lambda t: t in used or taken(t))
            used.add(names[i])
    return names, merged


def _new(group: Sequence[MailHeaders], taken: Callable[[str], bool]) -> str:
    """The first mail's Message-ID or `doc<id>`; else the next mail's; else the first's with
    a number."""
    keys = [m.message_id or f"doc{m.doc_id}" for m in group]
    for key in keys:
        if not taken(key):
            return key
    n = 2
    while taken(f"{keys[0]}~{n}"):
        n += 1
    return f"{keys[0]}~{n}"
