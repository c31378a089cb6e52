"""People as the user names them: the people of the address book (mail/address_book.py builds
it from the mailbox), and who a name in a question or a `from:` term stands for.

A first name may be several people: `resolve` says so, and the question reader then ranks
instead of filtering (mail/questions.py). Exact names come before nicknames ("Liz" is the Liz
the mail knows before any Elizabeth), a first name the user's mail greets someone with counts
as theirs, and the mailbox's owner is no one to filter by."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

from assistant.mail import person_names as pn
from assistant.mail.filters import Sender

_CONTAINED_MIN = 4  # a name word this long also finds a local part it ends (bpaddock: Paddock)


@dataclass
class Person:
    """One person: every address and name the mailbox shows for them, and why."""

    key: str
    name: str = ""
    addresses: set[str] = field(default_factory=set)
    froms: set[tuple[str, str]] = field(default_factory=set)  # (stored From, stored name)
    first: set[str] = field(default_factory=set)  # lowercase first names and nicknames used
    called: set[str] = field(default_factory=set)  # of those, what mail greets or signs them
    last: set[str] = field(default_factory=set)
    full: set[str] = field(default_factory=set)  # whole display names, lowercase
    names: Counter = field(default_factory=Counter)  # display names as seen, by mails
    sent: int = 0
    received: int = 0
    shared: bool = False
    owner: bool = False
    why: list[str] = field(default_factory=list)

    def shown(self) -> str:
        addresses = ", ".join(sorted(self.addresses)[:3])
        more = f" +{len(self.addresses) - 3}" if len(self.addresses) > 3 else ""
        return f"{self.name} <{addresses}{more}>" if self.name else f"<{addresses}{more}>"

    def text_names(self) -> list[str]:
        """How a mail's text would name them: their display names as seen ('Vince J
        Kaminski', as a forwarded mail's header line writes it), then first and last ('Steve
        Kean', 'Steven Kean'). None for a list's or an organisation's."""
        if not self.personal:
            return []
        seen = [n for n, _ in self.names.most_common(2) if pn.from_display(n)]
        firsts = sorted((f for f in self.first if len(f) > 1), key=lambda f: f != self._first())
        lasts = sorted(last for last in self.last if len(last) > 1)
        both = [f"{f} {last}" for f in firsts for last in lasts]
        turned = [f"{last}, {f}" for f in firsts[:1] for last in lasts]  # "From: Rice, Ken"
        return list(dict.fromkeys(n.lower() for n in [*seen, *both[:3], *turned, *both[3:]]))

    def _first(self) -> str:
        form = pn.from_display(self.name)
        return form.first if form else ""

    @cached_property
    def personal(self) -> bool:
        """A person's mail, not a list's or an organisation's (read once the book is built)."""
        return not self.shared and not pn.org_like(self.name)


@dataclass(frozen=True)
class Match:
    person: Person
    why: str


@dataclass(frozen=True)
class Resolved:
    """Who a name stands for: one person, several (ambiguous), or none."""

    asked: str
    matches: tuple[Match, ...]

    @property
    def people(self) -> list[Person]:
        return [m.person for m in self.matches]

    @property
    def one(self) -> Person | None:
        return self.matches[0].person if len(self.matches) == 1 else None

    @property
    def is_owner(self) -> bool:
        return any(m.person.owner for m in self.matches)


class People:
    """The address book (`build`), and the people a name stands for (`resolve`)."""

    def __init__(self, people: Iterable[Person]) -> None:
        self.people = list(people)

    @property
    def senders(self) -> list[Sender]:
        return [
            Sender(stored, name, p.sent) for p in self.people for stored, name in sorted(p.froms)
        ]

    def containing(self, text: str) -> list[Sender]:
        """Senders whose address or name holds every word of `text` (a `from:` term), accents
        aside (from:tomas finds Tomás)."""
        words = pn.fold(text).split()
        return [
            s
            for s in self.senders
            if all(w in pn.fold(s.stored) or w in pn.fold(s.name) for w in words)
        ]

    def resolve(self, name: str, in_passing: bool = False) -> Resolved:
        """The people `name` (one to three words, as a question names someone) stands for.
        `in_passing`: a capitalised word the question's words give no role (it may be a place
        or a company): one word then stands only for a first name people have."""
        asked = [w for w in pn.words(re.sub(r"['’]s$", "", name.strip())) if w]
        if not asked:
            return Resolved(name, ())
        if len(asked) > 1 and all(pn.particle(w) for w in asked[:-1]):
            tiers = _surname(self.people, asked)  # "de Vries", "van der Berg"
        elif len(asked) > 1:
            tiers = _full(self.people, asked)
        elif in_passing:
            tiers = _first_name(self.people, asked[0])
        else:
            tiers = _single(self.people, asked[0])
        for tier in tiers:
            if tier:
                tier = [Match(m.person, _as_typed(m.why, name)) for m in tier]
                return Resolved(name, tuple(sorted(tier, key=lambda m: -_mails(m.person))))
        return Resolved(name, ())

    def owner(self) -> list[Person]:
        return [p for p in self.people if p.owner]


def _as_typed(why: str, name: str) -> str:
    """`why` with the words asked as the user wrote them ('first name Tomás'), not folded."""
    for word in re.findall(r"[^\W\d_]+", name):
        if (folded := pn.fold(word)) != word.lower():
            why = why.replace(folded.title(), word.title())
    return why


def _mails(person: Person) -> int:
    return person.sent + person.received


def _full(people: list[Person], asked: list[str]) -> Iterable[list[Match]]:
    """First and last asked: exact names first, then a nickname or an initial for the first."""
    first, last, whole = asked[0], asked[-1], " ".join(asked)
    yield [Match(p, f"display name {p.name!r}") for p in people if whole in p.full]
    yield [
        Match(p, f"first name {first.title()} and last name {last.title()}")
        for p in people
        if last in p.last and first in p.first
    ]
    yield [
        Match(p, f"{first.title()} goes by or stands for {_nick_of(first, p).title()}")
        for p in people
        if last in p.last and _nick_of(first, p)
    ]
    yield [
        Match(p, f"last name {last.title()}, first initial {first[0].upper()}")
        for p in people
        if last in p.last and any(len(f) == 1 and f == first[0] for f in p.first)
    ]


def _surname(people: list[Person], asked: list[str]) -> Iterable[list[Match]]:
    """A last name with its particles ("de Vries"): the people of that last name (their forms
    keep its last word), then a display name holding it whole."""
    last, whole = asked[-1], " ".join(asked)
    yield [Match(p, f"last name {whole.title()}") for p in people if last in p.last
           and any(whole in f for f in p.full)]  # fmt: skip
    yield [Match(p, f"last name {last.title()}") for p in people if last in p.last]


def _single(people: list[Person], word: str) -> Iterable[list[Match]]:
    """One word: a first name the user greets with or the mail is signed with; a person's first
    or last name; then a nickname (Liz for Elizabeth); then a local part ending in it."""
    personal = [p for p in people if p.personal]
    yield [Match(p, _first_why(p, word)) for p in personal if word in p.first]
    yield [Match(p, f"last name {word.title()}") for p in personal if word in p.last]
    yield [Match(p, f"display name {p.name!r}") for p in people if word in p.full]
    yield [
        Match(p, f"{word.title()} goes by or stands for {_nick_of(word, p).title()}")
        for p in personal
        if _nick_of(word, p)
    ]
    if len(word) >= _CONTAINED_MIN:
        yield [
            Match(p, f"address {a}")
            for p in personal
            if (a := next((a for a in p.addresses if _local_ends(a, word)), ""))
        ]


def _first_name(people: list[Person], word: str) -> Iterable[list[Match]]:
    """A word seen in passing: a first name the nickname list knows, or one mail greets or
    signs someone with ("London", "Betas", "Enron" are none)."""
    personal = [p for p in people if p.personal]
    known = pn.known_first(word)
    yield [
        Match(p, _first_why(p, word))
        for p in personal
        if word in p.called or known and word in p.first
    ]
    if known:
        yield [
            Match(p, f"{word.title()} goes by or stands for {_nick_of(word, p).title()}")
            for p in personal
            if _nick_of(word, p)
        ]


def _first_why(person: Person, word: str) -> str:
    said = [w for w in person.why if f"'{word.title()}'" in w]
    return said[0] if said else f"first name {word.title()}"


def _nick_of(word: str, person: Person) -> str:
    return next((f for f in sorted(person.first) if len(f) > 1 and pn.same_first(word, f)), "")


def _local_ends(address: str, word: str) -> bool:
    local = address.split("@", 1)[0]
    return local[1:] == word or local.endswith(word) and len(local) - len(word) <= 1
