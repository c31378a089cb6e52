"""The address book, built from the mailbox: every address the headers show, with its display
names and how much mail it sent and received, grouped into people.

One person may have several addresses (work and personal webmail under one display name, or one
first and last name: 'Dottie Kerr' at kerr-solutions.com and at enron.com); a sender known only by
an address is named by its local part (steve.kean@ → Steve Kean); the user's own mail adds the
names it greets people by ("Dave, …" to david.delainey@), and mail the names it is signed with.
An address that sends under many names (a list, a no-reply), or under the names of two people
(a notification address: 'Daan Verhoeven' and 'Priya Nair' at notifications@github.com), is one
person per name (but the one its local part names keeps it); a name of it that is the name of
one person the mailbox knows is theirs too (their mail from it is theirs), the address not."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from assistant.mail import person_names as pn
from assistant.mail.people import People, Person
from assistant.mail.person_names import NameForm

_ADDRESS = re.compile(r"[\w.+'&-]+@[\w-]+(?:\.[\w-]+)+")
_WORDS = re.compile(r"[^\W\d_]+")
SHARED_NAMES = 3  # an address sending under this many names is a list's or a no-reply's
OWNER_SHARE = 0.2  # an address on this share of the mails (as in mail/threads.py) is the owner's


@dataclass(frozen=True)
class MailRows:
    """What the address book is built from (KnowledgeStore.mail's reads)."""

    senders: Sequence[tuple[str, str, int]]  # stored From, name, mails
    recipients: Sequence[tuple[str, str, int]] = ()  # an address header, its names, mails
    lines: Sequence[tuple[str, str, str, str]] = ()  # From, To, body start, body end


@dataclass
class _Seen:
    """One address (or one name of a shared address) as the headers show it."""

    address: str
    names: Counter = field(default_factory=Counter)
    froms: set[tuple[str, str]] = field(default_factory=set)
    sent: int = 0
    received: int = 0
    shared: bool = False  # one name of a shared address


def build(rows: MailRows) -> People:
    seen = _identities(rows)
    groups = _group(seen)
    people = [_person(key, [seen[k] for k in keys]) for key, keys in groups.items()]
    by_address = {a: p for p in people for a in p.addresses if not p.shared}
    _mark_owner(people, seen)
    _add_lines(rows.lines, by_address)
    return People(people)


def addresses_of(header: str) -> list[str]:
    return [a.lower() for a in _ADDRESS.findall(header or "")]


def _identities(rows: MailRows) -> dict[str, _Seen]:
    names_by_address: dict[str, set[str]] = defaultdict(set)
    for stored, name, _ in rows.senders:
        for address in addresses_of(stored)[:1] or [stored.strip().lower()]:
            names_by_address[address].add(name.strip().lower())
    shared = _shared(names_by_address)
    seen: dict[str, _Seen] = {}
    for stored, name, count in rows.senders:
        address = (addresses_of(stored)[:1] or [stored.strip().lower()])[0]
        keeps = address not in shared or _holds(shared[address], name)
        key = address if keeps else f"{address}|{name.strip().lower()}"
        entry = seen.setdefault(key, _Seen(address, shared=not keeps))
        entry.froms.add((stored, name))
        entry.sent += count
        if name.strip():
            entry.names[name.strip()] += count
    for header, names, count in rows.recipients:
        _received(seen, shared, addresses_of(header), names, count)
    return seen


def _shared(names_by_address: dict[str, set[str]]) -> dict[str, NameForm | None]:
    """The addresses that send under SHARED_NAMES names (a list, a no-reply; not the names of
    one person: Jeff Skilling, Jeffrey K Skilling, Skilling, Jeff), or under the names of two
    people (a notification address), each with the name of the one person it is still theirs
    (its local part names them: vmcarthur@ sends as Vicki McArthur and as her boss), if one."""
    shared: dict[str, NameForm | None] = {}
    for address, names in names_by_address.items():
        forms = [f for n in names if (f := pn.from_display(n)) is not None and f.full()]
        if len(names) >= SHARED_NAMES and not _one_persons(names, forms):
            shared[address] = None
        elif _two_people(forms):
            holders = [f for f in forms if pn.named_by(address, f)]
            one = holders and not _two_people(holders)
            shared[address] = holders[0] if one else None
    return shared


def _two_people(forms: list[NameForm]) -> bool:
    """Two of `forms` no one person's (Daan Verhoeven, Priya Nair)."""
    return any(not pn.one_persons(a, b) for i, a in enumerate(forms) for b in forms[i + 1 :])


def _one_persons(names: set[str], forms: list[NameForm]) -> bool:
    """Every one of `names` a person's, and all one person's; none a list's or a service's."""
    return len(forms) == len(names - {""}) and not _two_people(forms)


def _holds(holder: NameForm | None, name: str) -> bool:
    """Whether mail from a shared address under `name` is its holder's."""
    form = pn.from_display(name)
    return holder is not None and (
        not name.strip() or form is not None and pn.one_persons(form, holder)
    )


def _received(seen, shared, addresses: list[str], names: str, count: int) -> None:
    listed = [n.strip() for n in names.split(";") if n.strip()] if names else []
    paired = len(listed) == len(addresses)
    for i, address in enumerate(addresses):
        if address in shared and shared[address] is None:  # no one's: a list's, a service's
            continue
        entry = seen.setdefault(address, _Seen(address))
        entry.received += count
        if paired and pn.from_display(listed[i]) is not None:
            entry.names[listed[i]] += count


def _forms(entry: _Seen) -> list[NameForm]:
    forms = [f for n in entry.names if (f := pn.from_display(n)) is not None]
    if not forms and entry.address and (local := pn.from_address(entry.address)) is not None:
        forms.append(local)
    return forms


def _group(seen: dict[str, _Seen]) -> dict[str, list[str]]:
    """Keys of one person together: the same first and last name (or a nickname of it, or the
    first name cut short: stan.horton@ and Stanley Horton) on any of their addresses; an
    initial joins the one person of that last name and initial."""
    parent = {k: k for k in seen}

    def find(k: str) -> str:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    by_name: dict[tuple[str, str], list[str]] = defaultdict(list)
    for key, entry in seen.items():
        if "|" in key:
            continue
        for form in _forms(entry):
            if form.full():
                by_name[(form.first, form.last)].append(key)
    firsts_of: dict[str, list[str]] = defaultdict(list)
    for first, last in by_name:
        firsts_of[last].append(first)
    for (first, last), keys in list(by_name.items()):
        related = [k for v in pn.nicknames(first) for k in by_name.get((v, last), [])]
        cut = [f for f in firsts_of[last] if pn.shortened(first, f)]
        related += [k for f in cut for k in by_name[(f, last)]]
        for other in keys[1:] + related:
            parent[find(other)] = find(keys[0])
    _join_initials(seen, by_name, parent, find)
    _join_namesakes(seen, by_name, parent, find)
    groups: dict[str, list[str]] = defaultdict(list)
    for key in seen:
        groups[find(key)].append(key)
    return groups


def _join_initials(seen, by_name, parent, find) -> None:
    by_last: dict[str, set[str]] = defaultdict(set)
    for first, last in by_name:
        by_last[last].add(first)
    for key, entry in seen.items():
        if "|" in key or entry.names or (form := pn.initial_form(entry.address)) is None:
            continue
        firsts = [f for f in by_last.get(form.last, ()) if f[0] == form.first]
        if len(firsts) == 1:
            parent[find(key)] = find(by_name[(firsts[0], form.last)][0])


def _join_namesakes(seen, by_name, parent, find) -> None:
    """A name a shared address sends under ('Priya Nair' at notifications@github.com) joins
    the one person of that first and last name, if one."""
    for key, entry in seen.items():
        if "|" not in key:
            continue
        forms = [f for n in entry.names if (f := pn.from_display(n)) is not None and f.full()]
        roots = {find(k) for f in forms for k in by_name.get((f.first, f.last), [])}
        if len(roots) == 1:
            parent[find(key)] = roots.pop()


def _person(key: str, entries: list[_Seen]) -> Person:
    person = Person(key, shared="|" in key)
    own: Counter = Counter()  # the names of their own addresses, which name them first
    for entry in entries:
        if not entry.shared or person.shared:  # their name on a shared address: not theirs
            person.addresses.add(entry.address)
            own.update(entry.names)
        person.froms |= entry.froms
        person.names.update(entry.names)
        person.sent += entry.sent
        person.received += entry.received
    names = own or person.names
    named = [n for n, _ in names.most_common() if pn.from_display(n)]
    person.name = (named or [n for n, _ in names.most_common()] or [""])[0]
    for name, count in person.names.most_common():
        person.full.add(" ".join(pn.words(name)))
        if (form := pn.from_display(name)) is not None:
            _add_form(person, form, f"display name {name!r} on {_mails_n(count)}", name)
    for entry in entries:
        if not entry.names and (form := pn.from_address(entry.address)) is not None:
            _add_form(person, form, f"address {entry.address} (no display name)")
        if entry.shared and not person.shared:
            names = ", ".join(repr(n) for n in entry.names)
            why = f"sends as {names} from {entry.address} too, an address not theirs alone"
            person.why.append(why)
    return person


def _add_form(person: Person, form: NameForm, why: str, name: str = "") -> None:
    """The form's names (folded, as they are matched) become the person's; `why` shows them
    as `name` writes them (Tomás, not Tomas)."""
    person.first.add(form.first)
    person.last.add(form.last)
    first, last = form.first, form.last
    if not name.isascii():
        written = {pn.fold(w): w for w in _WORDS.findall(name)}
        first, last = written.get(first, first), written.get(last, last)
    person.why.append(f"{why}: {first.title()} {last.title()}")


def _mark_owner(people: list[Person], seen: dict[str, _Seen]) -> None:
    """The owner: the person of the address on the most mails, if on OWNER_SHARE of them."""
    mails = sum(e.sent for e in seen.values())
    counts: Counter = Counter()
    for entry in seen.values():
        if not entry.shared:
            counts[entry.address] += entry.sent + entry.received
    if not counts or not mails:
        return
    address, n = counts.most_common(1)[0]
    if n >= OWNER_SHARE * mails:
        for person in people:
            person.owner = address in person.addresses and not person.shared


def _add_lines(lines, by_address: dict[str, Person]) -> None:
    """First names from mail: the names the owner's own mail greets its one addressee with,
    and the names a sender signs with (where they fit the names the person has)."""
    greets: Counter = Counter()
    signs: Counter = Counter()
    for sender, to, start, end in lines:
        who = by_address.get((addresses_of(sender)[:1] or [""])[0])
        targets = addresses_of(to)
        to_one = len(targets) == 1 and targets[0] in by_address
        if who is not None and who.owner and to_one:
            greets.update((targets[0], name) for name in pn.greeted(start))
        if who is not None and not who.owner and (name := pn.signed(end)):
            signs[(next(iter(who.addresses)), name)] += 1
    # what a name must fit: the first names the headers gave (not one another greeting
    # added: "Reed and Lana," greets two people on one address)
    firsts = {id(p): {f for f in p.first if len(f) > 1} for p in by_address.values()}
    for (address, name), n in greets.items():
        person = by_address[address]
        why = f"your mail greets them '{name.title()}'"
        _alias(person, name, n, why, 1, firsts[id(person)])
    for (address, name), n in signs.items():
        person = by_address[address]
        why = f"their mail is signed '{name.title()}'"
        _alias(person, name, n, why, 2, firsts[id(person)])


def _starts(a: str, b: str) -> bool:
    return min(len(a), len(b)) >= 3 and (a.startswith(b) or b.startswith(a))


def _alias(person: Person, name: str, n: int, why: str, unfit_min: int, firsts: set[str]) -> None:
    """`name` becomes one of the person's first names where it fits one of `firsts` (theirs
    from the headers: a nickname of it, or the start of it: Sam for Samuel), or where they
    have none and it was seen `unfit_min` times."""
    fits = any(pn.same_first(f, name) or _starts(f, name) for f in firsts)
    if name in person.first:
        person.called.add(name)
    if name in person.first or not (fits or (not firsts and n >= unfit_min)):
        return
    person.first.add(name)
    person.called.add(name)
    person.why.append(f"{why} on {_mails_n(n)}")


def _mails_n(n: int) -> str:
    return f"{n} mail{'s' if n != 1 else ''}"
