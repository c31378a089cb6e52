"""Filters on mail, as SQL over the documents table (alias `d`): what query terms and a
question's words narrow the candidates to before any ranking (knowledge/retrieval.py).

Each condition keeps the words it was read from, so what was parsed can be shown to the user
("from: Vince Kaminski · date: 2001-10-08..2001-10-14") and written as JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from assistant.mail.dates import DateRange

FIELDS = ("from", "to", "cc", "subject", "date", "thread", "folder", "has", "text")


@dataclass(frozen=True)
class Condition:
    """One filter: its field, what it shows, and its SQL over `documents d`."""

    field: str
    shown: str
    clause: str
    params: tuple = ()
    negated: bool = False

    def sql(self) -> tuple[str, list]:
        clause = f"NOT coalesce(({self.clause}), 0)" if self.negated else f"({self.clause})"
        return clause, list(self.params)

    def label(self) -> str:
        return f"{'-' if self.negated else ''}{self.field}: {self.shown}"


@dataclass(frozen=True)
class Filters:
    """Conditions that all hold (AND). Empty: every chunk."""

    conditions: tuple[Condition, ...] = ()
    source: str = "terms"  # "terms" (typed as from:…) or "words" (read from a question)

    def __bool__(self) -> bool:
        return bool(self.conditions)

    def sql(self) -> tuple[str, list]:
        """(WHERE clause, parameters); "1" when there is nothing to filter."""
        parts, params = [], []
        for condition in self.conditions:
            clause, values = condition.sql()
            parts.append(clause)
            params += values
        return (" AND ".join(parts) or "1"), params

    def describe(self) -> str:
        return " · ".join(c.label() for c in self.conditions)

    def as_dict(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for c in self.conditions:
            out.setdefault(c.field, []).append(f"{'-' if c.negated else ''}{c.shown}")
        return out

    def plus(self, more: Sequence[Condition]) -> Filters:
        return Filters((*self.conditions, *more), self.source)


@dataclass(frozen=True)
class Sender:
    """A sender the store has: the From header as stored, and the name kept beside it."""

    stored: str
    name: str = ""
    count: int = 0
    tokens: frozenset[str] = field(default_factory=frozenset)

    def shown(self) -> str:
        address = self.stored
        return f"{self.name} <{address}>" if self.name and self.name not in address else address


def sender_is(senders: Sequence[Sender], shown: str, negated: bool = False) -> Condition:
    """From one of `senders`: a stored From value under that name (the sender index answers
    it). None found: a condition no mail meets, so a filter that matches nobody says so."""
    if not senders:
        return Condition("from", shown, "0", (), negated)
    clause = " OR ".join(["(d.sender = ? AND coalesce(d.sender_name, '') = ?)"] * len(senders))
    params = tuple(v for s in senders for v in (s.stored, s.name))
    return Condition("from", shown, clause, params, negated)


def words_in(
    field_name: str, columns: Sequence[str], words: Sequence[str], shown: str, negated: bool = False
) -> Condition:
    """Every one of `words` in one of `columns` (case-insensitive substring, as LIKE is)."""
    parts, params = [], []
    for word in words:
        parts.append(
            "(" + " OR ".join(f"coalesce({c}, '') LIKE ? ESCAPE '\\'" for c in columns) + ")"
        )
        params += [like(word)] * len(columns)
    return Condition(field_name, shown, " AND ".join(parts) or "1", tuple(params), negated)


def like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def date_in(span: DateRange, negated: bool = False) -> Condition:
    """The mail's date (ISO, in the sender's zone as the mail says it) within `span`: ISO text
    compares as dates do, so the date index answers it."""
    start, after = span.bounds()
    parts, params = [], []
    if start:
        parts.append("d.date >= ?")
        params.append(start)
    if after:
        parts.append("d.date < ?")
        params.append(after)
    clause = " AND ".join(parts) or "d.date IS NOT NULL"
    return Condition("date", str(span), clause, tuple(params), negated)


def thread_is(value: str, negated: bool = False) -> Condition:
    """The thread of a Message-ID (the stored thread_id, or the mail's own id), else mail whose
    subject holds `value` (a thread named by its subject; Re:/Fwd: prefixes do not matter)."""
    ident = value.strip("<>")
    clause = (
        "d.thread_id IN (SELECT thread_id FROM documents WHERE message_id = ? OR thread_id = ?)"
        " OR coalesce(d.title, '') LIKE ? ESCAPE '\\'"
    )
    return Condition("thread", value, clause, (ident, ident, like(value)), negated)


def has_attachment(negated: bool = False) -> Condition:
    clause = "d.attachments IS NOT NULL AND d.attachments NOT IN ('', '[]')"
    return Condition("has", "attachment", clause, (), negated)
