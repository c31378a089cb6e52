"""Filters read from a plain question by rules (never by the model): the people it names, in
the role its words give them (mail/mentions.py: sender, recipient, or participant), resolved by
the address book (mail/people.py); a quoted subject ("the 'SETI via eWooglin' thread"); a date
in words where the question asks when mail was sent (mail/when.py).

A name that is one person filters; a name several people have, or no one has, ranks instead (their
mail first, the rest after), and its label says so. A filter never empties the result: a date no
mail has ranks instead, and where the filters together leave no mail, the date and then the
people rank instead, one at a time, until some mail is left. The mail is ranked by the question
without the name of a person a filter narrows to (Filters.unsaid: every mail left is theirs, so
the name would rank only mail that also writes it, a signature or a quoted header); a name that
ranks, a date and a subject keep their words. The answer reads the question whole."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import date

from assistant.mail import filters as f
from assistant.mail.date_words import in_words
from assistant.mail.filters import Condition, Filters
from assistant.mail.mentions import FROM, TO, mentions
from assistant.mail.people import People, Person, Resolved
from assistant.mail.when import of_sending

_QUOTED = re.compile(r"(?<!\w)['‘\"“](?P<quoted>[^'\"“”‘’]{3,}?|[^\"“”]{3,}?)['’\"”](?!\w)")
SHOWN_PEOPLE = 3  # of the people a name stands for, those named in its label


class QuestionReader:
    """Reads a question's filters against the address book and a count of mail a filter
    leaves (`count(filters)`), relative dates against `today`."""

    def __init__(
        self, people: People, count: Callable[[Condition | Filters], int], today: date
    ) -> None:
        self.people = people
        self.count = count
        self.today = today

    def read(self, question: str) -> Filters:
        filters = Filters((), "words")
        for condition, ranked in self._people(question):
            filters = filters.demoted(condition, ranked) if ranked else filters.plus([condition])
        filters = filters.plus(list(self._subject(question)))
        found = in_words(question, self.today)
        if found is not None and of_sending(question, found):
            when = f.date_in(found.range).at(found.start, found.end)
            filters = (
                filters.plus([when]) if self.count(when) else filters.demoted(when, "no mail then")
            )
        return self._never_empty(filters)

    def _people(self, question: str) -> Iterator[tuple[Condition, str]]:
        """(condition, why it ranks or '') for each person the question names."""
        seen: set[str] = set()
        for mention in mentions(question):
            resolved = self.people.resolve(mention.name, in_passing=not mention.said)
            if resolved.is_owner:
                continue
            people = _in_role(resolved, mention.role)
            keys = frozenset(p.key for p in people)
            if people and keys <= seen:
                continue
            seen |= keys
            at = (mention.start, mention.end)
            if len(people) == 1:
                yield f.person_is(mention.role, people, people[0].shown(), mention.name).at(*at), ""
            elif people:
                condition = f.person_is(mention.role, people, mention.name, mention.name)
                yield condition.at(*at), _several(people)
            elif mention.said:
                yield Condition(mention.role, mention.name, "0"), "no one of that name"

    def _subject(self, question: str) -> Iterator[Condition]:
        for match in _QUOTED.finditer(question):
            text = match.group("quoted").strip()
            condition = f.words_in("subject", ["d.title"], [text], text)
            if text and self.count(condition):
                yield condition
                return

    def _never_empty(self, filters: Filters) -> Filters:
        """Filters that leave some mail: while they leave none, the date, then the people
        named last, rank instead."""
        while filters.narrows() and not self.count(Filters(filters.conditions)):
            order = sorted(enumerate(filters.conditions), key=lambda ic: (_rank(ic[1]), -ic[0]))
            filters = filters.demoted(order[0][1], "no mail with the other filters")
        return filters


def _in_role(resolved: Resolved, role: str) -> list[Person]:
    """The people of `resolved` that have sent mail (a sender) or received it (a recipient);
    all of them where none has."""
    people = resolved.people
    if role == FROM:
        return [p for p in people if p.sent] or people
    if role == TO:
        return [p for p in people if p.received] or people
    return people


def _rank(condition: Condition) -> int:
    return {"date": 0, "subject": 1}.get(condition.field, 2)


def _several(people: list[Person]) -> str:
    names = [p.name or min(p.addresses) for p in people[:SHOWN_PEOPLE]]
    more = f" +{len(people) - SHOWN_PEOPLE}" if len(people) > SHOWN_PEOPLE else ""
    return f"{len(people)} people: {', '.join(names)}{more}"
