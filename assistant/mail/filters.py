"""Filters on mail, as SQL over the documents table (alias `d`): what query terms and a
question's words narrow the candidates to before any ranking (knowledge/retrieval.py).

Each condition keeps the words it was read from, so what was parsed can be shown to the user
("from: Vince Kaminski · date: 2001-10-08..2001-10-14") and written as JSON. A condition read
from a question that would not narrow well (a name several people have, or no one; a date no
mail has) ranks instead: the mail meeting it comes first, the rest still follows, and its label
says so (knowledge/retrieval.py adds its weight).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from assistant.mail.dates import DateRange

# "with": a participant (sender, recipient, cc, or named in the text)
FIELDS = ("from", "to", "cc", "with", "subject", "date", "thread", "folder", "has", "text")
NAMES_IN_TEXT = 8  # of a person's names, the most searched for in a mail's text
# a sender's own mail before mail that only carries theirs, in units of the ranking bonus
# (knowledge/retrieval.py PREFERRED_BONUS; bench/results/filters_people.json)
FIRST_WEIGHT = 2.0
# the filters whose words a question's ranking text leaves out (Filters.unsaid)
UNSAID: tuple[str, ...] = ("from", "to")
_WORDS = re.compile(r"[^\W_]+")  # letters and digits: what subject_words takes for a word


@dataclass(frozen=True)
class Condition:
    """One filter: its field, what it shows, and its SQL over `documents d`."""

    field: str
    shown: str
    clause: str
    params: tuple = ()
    negated: bool = False
    ranks: str = ""  # why it ranks instead of filtering ("" for a filter)
    # among the mail it leaves, what comes first (a person's own mail before mail quoting them)
    first: tuple[str, tuple] | None = None
    said: tuple[int, int] | None = None  # where a question says it (start, end), when read from one

    def sql(self) -> tuple[str, list]:
        clause = f"NOT coalesce(({self.clause}), 0)" if self.negated else f"({self.clause})"
        return clause, list(self.params)

    def label(self) -> str:
        ranked = f" ({self.ranks}: ranks, does not filter)" if self.ranks else ""
        return f"{'-' if self.negated else ''}{self.field}: {self.shown}{ranked}"

    def ranking(self, why: str) -> Condition:
        return replace(self, ranks=why)

    def at(self, start: int, end: int) -> Condition:
        return replace(self, said=(start, end))


@dataclass(frozen=True)
class Filters:
    """Conditions that all hold (AND). Empty: every chunk."""

    conditions: tuple[Condition, ...] = ()
    source: str = "terms"  # "terms" (typed as from:…) or "words" (read from a question)
    ranked: tuple[Condition, ...] = ()  # read, but ranking the mail rather than narrowing it

    def __bool__(self) -> bool:
        return bool(self.conditions or self.ranked)

    def narrows(self) -> bool:
        return bool(self.conditions)

    def preferred(self) -> list[tuple[str, list, float]]:
        """(WHERE clause, parameters, weight) of the conditions that rank (none that no mail
        can meet), and of what comes first among the mail a filter leaves."""
        ranking = [(*c.sql(), 1.0) for c in self.ranked if c.clause != "0"]
        firsts = [c.first for c in self.conditions if c.first]
        return ranking + [(f"({clause})", list(params), FIRST_WEIGHT) for clause, params in firsts]

    def sql(self) -> tuple[str, list]:
        """(WHERE clause, parameters); "1" when there is nothing to filter."""
        parts, params = [], []
        for condition in self.conditions:
            clause, values = condition.sql()
            parts.append(clause)
            params += values
        return (" AND ".join(parts) or "1"), params

    def describe(self) -> str:
        return " · ".join(c.label() for c in (*self.conditions, *self.ranked))

    def unsaid(self, question: str, fields: Sequence[str] | None = None) -> str:
        """`question` without the words of the filters of `fields` that narrow: every mail they
        leave meets them, so those words rank nothing but the mail that also names them in its
        text (a signature, a quoted header). Conditions that rank keep their words."""
        fields = UNSAID if fields is None else fields
        spans = sorted(
            (c.said for c in self.conditions if c.said and c.field in fields), reverse=True
        )
        if not spans:  # as asked: the answer then ranks by the question it already embedded
            return question
        for start, end in spans:
            question = question[:start] + " " + question[end:]
        return " ".join(question.split())

    def as_dict(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for c in (*self.conditions, *self.ranked):
            ranked = " (ranks)" if c.ranks else ""
            out.setdefault(c.field, []).append(f"{'-' if c.negated else ''}{c.shown}{ranked}")
        return out

    def plus(self, more: Sequence[Condition]) -> Filters:
        return Filters((*self.conditions, *more), self.source, self.ranked)

    def demoted(self, condition: Condition, why: str) -> Filters:
        """`condition` moved from the filters to the conditions that rank."""
        kept = tuple(c for c in self.conditions if c is not condition)
        return Filters(kept, self.source, (*self.ranked, condition.ranking(why)))


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


class Someone(Protocol):
    """A person of the address book (mail/people.py): the From values they send under, their
    addresses, and their names as a mail's text would write them."""

    froms: set[tuple[str, str]]
    addresses: set[str]
    shared: bool

    def text_names(self) -> list[str]: ...


def person_is(field_name: str, people: Sequence[Someone], shown: str, asked: str = "") -> Condition:
    """Mail from one of `people` ("from": they sent it, or it carries their mail: forwarded and
    quoted mail names its sender in the text), to them ("to": To or Cc, or their reply quoting
    it; what was sent to them first), or with them ("with":
    sent, received, or named in the text). `asked`: the name as the question says it ("Joe
    Sutton" for Joseph W Sutton), also looked for in the text when it is a full name."""
    sent, sent_params = _sent_by(people) if field_name in ("from", "with") else ([], [])
    parts: list[str] = []
    params: list = []
    for person in people:
        if field_name in ("to", "with") and not person.shared:
            for address in sorted(person.addresses):
                parts.append(_ANY_OF.format("d.recipients", "d.cc"))
                params += [like(address)] * 2
        if field_name in ("from", "with"):
            for name in _text_names(person, asked):
                clause, values = like_any(["d.body", "d.quoted"], name)
                parts.append(clause)
                params += values
    replies, reply_params = _sent_by(people) if field_name == "to" else ([], [])
    if replies:  # mail to them includes their replies that quote it, as mail from someone
        # includes mail that carries theirs: a mailbox often keeps the reply, not the sent mail
        replies = [f"(({' OR '.join(replies)}) AND coalesce(d.quoted, '') != '')"]
    clause = " OR ".join([*sent, *parts, *replies]) or "0"
    if field_name == "from" and sent and parts:
        first = (" OR ".join(sent), tuple(sent_params))
    elif replies and parts:  # mail to them before their replies
        first = (" OR ".join(parts), tuple(params))
    else:
        first = None
    return Condition(field_name, shown, clause, (*sent_params, *params, *reply_params), first=first)


def _sent_by(people: Sequence[Someone]) -> tuple[list[str], list]:
    """A clause for each address and name the people send under, and its parameters."""
    pairs = [pair for person in people for pair in sorted(person.froms)]
    clauses = ["(d.sender = ? AND coalesce(d.sender_name, '') = ?)"] * len(pairs)
    return clauses, [value for pair in pairs for value in pair]


_ANY_OF = "(coalesce({0}, '') LIKE ? ESCAPE '\\' OR coalesce({1}, '') LIKE ? ESCAPE '\\')"


def _text_names(person: Someone, asked: str) -> list[str]:
    """The names the text is searched for: the full name asked, then the person's own."""
    names = [asked.lower()] if " " in asked.strip() else []
    return list(dict.fromkeys([*names, *person.text_names()]))[:NAMES_IN_TEXT]


def words_in(
    field_name: str, columns: Sequence[str], words: Sequence[str], shown: str, negated: bool = False
) -> Condition:
    """Every one of `words` in one of `columns` (case-insensitive substring, as LIKE is)."""
    parts, params = [], []
    for word in words:
        clause, values = like_any(columns, word)
        parts.append(clause)
        params += values
    return Condition(field_name, shown, " AND ".join(parts) or "1", tuple(params), negated)


def like_any(columns: Sequence[str], text: str) -> tuple[str, list[str]]:
    """`text` in one of `columns`, in any case: SQLite's LIKE ignores the case of ASCII letters
    only, so a word with others ("åsa sjöberg") is also looked for as written in title case
    and in capitals ("Åsa Sjöberg", "ÅSA SJÖBERG")."""
    forms = [text] if text.isascii() else list(dict.fromkeys([text, text.lower(), text.title(),
                                                              text.upper()]))  # fmt: skip
    tests = [(c, f) for f in forms for c in columns]
    clause = " OR ".join(f"coalesce({c}, '') LIKE ? ESCAPE '\\'" for c, _ in tests)
    return f"({clause})", [like(f) for _, f in tests]


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
    """The thread of a thread id (one merged into another: that one), of a Message-ID or of a
    mail's number (`#12`, as search shows it: the thread that mail is in), else mail whose
    subject holds `value`'s words as whole words (`subject_words`): `thread:hi` is the thread
    'hi', or a subject 'Re: Hi Maya', never 'this' or 'High tide'."""
    ident = value.strip().strip("<>")
    if re.fullmatch(r"#\d+", ident):  # a mail's number, as search shows it: its thread
        clause = "d.thread_id IN (SELECT thread_id FROM documents WHERE id = ?)"
        return Condition("thread", value, clause, (int(ident[1:]),), negated)
    words, params = subject_words(value)
    clause = (
        "d.thread_id IN (SELECT thread_id FROM documents WHERE message_id = ? OR thread_id = ?"
        " UNION ALL SELECT thread_id FROM thread_aliases WHERE alias = ?)"
        f" OR {words}"
    )
    return Condition("thread", value, clause, (ident, ident, ident, *params), negated)


def message_id_is(value: str, negated: bool = False) -> Condition:
    """The mail of a Message-ID (with or without its angle brackets), as notmuch's id:."""
    ident = value.strip().strip("<>")
    return Condition("id", value, "d.message_id = ?", (ident,), negated)


def subject_has(value: str, negated: bool = False) -> Condition:
    """Mail whose subject holds `value`'s words as whole words (`subject_words`): subject:hi
    is 'Hi Maya', not 'this week'."""
    clause, params = subject_words(value)
    return Condition("subject", value, clause, tuple(params), negated)


def subject_words(text: str) -> tuple[str, list[str]]:
    """SQL for a subject that holds the words of `text` as whole words, in their order, with
    only spaces or punctuation between them, in any case (as notmuch's and mu's subject: match
    words): each word is looked for by LIKE, the mail it leaves checked by the database's
    `words_in_order` (registered by knowledge/db.py)."""
    words = _WORDS.findall(text)
    if not words:
        return "0", []
    each = words_in("subject", ["d.title"], words, text)  # each word by LIKE, narrowing first
    return f"({each.clause} AND words_in_order(?, d.title))", [*each.params, " ".join(words)]


def has_attachment(negated: bool = False) -> Condition:
    clause = "d.attachments IS NOT NULL AND d.attachments NOT IN ('', '[]')"
    return Condition("has", "attachment", clause, (), negated)
