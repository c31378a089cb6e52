"""Filters read from a plain question by rules (never by the model): a sender ("what did Vince
send", "the mail from Sherri"), a recipient ("emails to Greg", "tell Thames Fulton"), a quoted
subject ("the 'SETI via eWooglin' thread") and a date in words (mail/dates.py). A name becomes a
filter only when the mailbox has a sender (or a recipient) of that name; a quoted subject only
when some mail's subject holds it. The question itself is left whole for ranking."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import date

from assistant.mail import filters as f
from assistant.mail.dates import in_words
from assistant.mail.filters import Condition, Filters, Sender
from assistant.mail.people import People

_NAME = r"(?P<name>[A-Z][A-Za-z.'’-]+(?: [A-Z][A-Za-z.'’-]+){0,2})"
_SENT = r"(?:sent|send|wrote|write|said|say|asked|emailed|e-mailed|replied|forwarded|announced)"
_FROM = [
    re.compile(r"\bfrom " + _NAME),
    re.compile(r"\b(?:did|does|has|had|will|would) " + _NAME + r" [a-z]"),
    re.compile(_NAME + r"['’]s (?:mail|e-?mail|message|note|letter|reply|memo)"),
    re.compile(
        r"\bwas " + _NAME + r"(?: from [A-Z][\w ]*?)? (?:asking|saying|proposing|"
        r"suggesting|offering|writing|sending|announcing|about)"
    ),
    re.compile(r"(?<![a-z] )\b" + _NAME + r" " + _SENT + r"\b"),
]
_TO = [
    re.compile(
        r"\b(?:sent|send|wr[io]te(?: back)?|repl(?:y|ied)|e-?mails?|mails?|messages?|"
        r"forward(?:ed)?|letters?|notes?|went|go(?:ne)?)(?: \w+){0,2}? to " + _NAME
    ),
    re.compile(
        r"\b(?:send|sent|tell|told|ask|asked|forward|forwarded|e-?mail|e-?mailed|"
        r"remind|reminded|invite|invited|answer|answered|give|gave) " + _NAME
    ),
]
_QUOTED = re.compile(r"(?<!\w)['‘\"“](?P<quoted>[^'\"“”‘’]{3,}?|[^\"“”]{3,}?)['’\"”](?!\w)")
_NOT_NAMES = {"i", "me", "you", "we", "jeff"}  # the mailbox's owner is no filter
_MAIL_WORDS = re.compile(
    r"\b" + _SENT + r"\b|\b(?:sends?|sending|writes?|written|says|asks?|mailed|repl(?:y|ies)|"
    r"forward|received?|receiving|got|get|gets|heard|hear|came in|come in|arrived?|e-?mails?|"
    r"mails?|messages?|notes?|letters?|memos?|newsletters?|threads?|inbox|invit(?:e|es|ation)s?)\b",
    re.IGNORECASE,
)
_JUST_PAST = re.compile(r"\b(?:last|past|yesterday|today|this|earlier|ago|since)\b", re.I)


class QuestionReader:
    """Reads a question's filters against the senders the store has and a count of mail a
    filter leaves (`count(condition)`), relative dates against `today`."""

    def __init__(self, people: People, count: Callable[[Condition], int], today: date) -> None:
        self.people = people
        self.count = count
        self.today = today

    def read(self, question: str) -> Filters:
        conditions = [*self._sender(question), *self._recipient(question)]
        conditions += self._subject(question)
        found = in_words(question, self.today)
        if found is not None and _of_the_mail(question, found.words):
            conditions.append(f.date_in(found.range))
        return Filters(tuple(conditions), "words")

    def _sender(self, question: str) -> Iterator[Condition]:
        for name, senders in self._names(question, _FROM):
            if senders:
                yield f.sender_is(senders, _shown(name, senders))
                return

    def _names(self, question: str, rules) -> Iterator[tuple[str, list[Sender]]]:
        for rule in rules:
            for match in rule.finditer(question):
                name = _clean(match.group("name"))
                if name and name.lower() not in _NOT_NAMES:
                    yield name, self.people.named(name.split())

    def _recipient(self, question: str) -> Iterator[Condition]:
        for rule in _TO:
            for match in rule.finditer(question):
                name = _clean(match.group("name"))
                if not name or name.lower() in _NOT_NAMES:
                    continue
                condition = f.words_in(
                    "to", ["d.recipients", "d.recipient_names"], name.split(), name
                )
                if self.count(condition):
                    yield condition
                    return

    def _subject(self, question: str) -> Iterator[Condition]:
        for match in _QUOTED.finditer(question):
            text = match.group("quoted").strip()
            condition = f.words_in("subject", ["d.title"], [text], text)
            if text and self.count(condition):
                yield condition
                return


def _of_the_mail(question: str, words: str) -> bool:
    """A date in words is when the mail came only where the question speaks of the mail (it was
    sent, came in, a message, a newsletter …) or of a time just past ("last week", "yesterday",
    "since Monday"). Otherwise it dates what the mail is about: "the conference in June" is
    written about in May, "the November 2000 conference" in March 2001; it stays a word to
    rank by (bench/results/funnel_lines.json: three real questions lost their mail to it)."""
    return bool(_MAIL_WORDS.search(question) or _JUST_PAST.search(words))


def _clean(name: str) -> str:
    """Possessives and trailing punctuation off: "Jim Dent's" → "Jim Dent"."""
    name = re.sub(r"['’]s$", "", name.strip())
    return name.strip(".'’-")


def _shown(name: str, senders: list[Sender]) -> str:
    """One address: its best-known name and the address; several: the name asked, and theirs."""
    if len({s.stored for s in senders}) == 1:
        return max(senders, key=lambda s: (bool(s.name), s.count)).shown()
    names = list(dict.fromkeys(s.name or s.stored for s in senders))
    listed = ", ".join(names[:3])
    more = f" +{len(names) - 3}" if len(names) > 3 else ""
    return f"{name} ({listed}{more})"
