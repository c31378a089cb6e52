"""Query terms, notmuch/mu style: `from:` `to:` `cc:` `subject:` `date:` `thread:` `folder:`
`has:attachment`, "quoted phrases", `-` before a term or word to exclude it. What is left is
the text that ranks the mail the filters leave (docs/search.md lists the terms)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

from assistant.mail import filters as f
from assistant.mail.dates import term as date_term
from assistant.mail.filters import Condition, Filters
from assistant.mail.people import People

TERMS = ("from", "to", "cc", "subject", "date", "thread", "folder", "has", "id")
# other tools' names for these terms: mu's maildir: and msgid:, notmuch's path: and mid:
ALIASES = {"maildir": "folder", "path": "folder", "msgid": "id", "mid": "id"}
# notmuch's and mu's terms for what this app does not keep (tags, flags, sizes, MIME parts):
# an error that says so, not the term searched as a word (is:unread found mail saying "unread")
_FLAGS = "no flags are imported (unread, flagged, replied: your mail client keeps them)"
_FILE = "an attached file's name is searched as a word, with has:attachment"
UNKEPT = {
    "tag": "no tags are imported (your mail client keeps them)",
    "is": _FLAGS,
    "flag": _FLAGS,
    "prio": "no priorities are imported",
    "size": "no sizes are kept",
    "mime": f"no MIME types are kept; {_FILE}",
    "attachment": _FILE,
    "embed": _FILE,
    "lang": "no languages are kept",
    "list": "no mailing-list ids are kept; from: or to: the list's address finds its mail",
    "lastmod": "no revisions are kept",
    "property": "no properties are kept",
}
_TOKEN = re.compile(
    r'(?P<neg>-)?(?:(?P<field>[a-z]+):(?:"(?P<qvalue>[^"]*)"?|(?P<value>\S+))'
    r'|"(?P<phrase>[^"]*)"?|(?P<word>\S+))',
    re.IGNORECASE,
)


_EXCLUDED = re.compile(r"[^\W\d_]")  # `-lunch`: an excluded word starts with a letter


class QueryError(ValueError):
    """A term that cannot be read; the message names it and what is understood."""


@dataclass(frozen=True)
class MailQuery:
    """The text to rank by, and the filters that narrow the candidates first."""

    text: str
    filters: Filters = field(default_factory=Filters)

    def as_dict(self) -> dict:
        return {"text": self.text, "filters": self.filters.as_dict(), "source": self.filters.source}


def has_terms(text: str) -> bool:
    """Whether `text` is read as a query: it holds a term (`from:x`, a known field) or an
    exclusion (`-lunch`, `-"board meeting"`), or it is only quoted phrases ('"board meeting"');
    a question that quotes a phrase among its words is read as a question."""
    tokens = list(_TOKEN.finditer(text))
    if any(_term(m.group("field")) and (m.group("value") or m.group("qvalue")) for m in tokens):
        return True
    if any(m.group("neg") and (_EXCLUDED.match(m.group("word") or "") or m.group("phrase"))
           for m in tokens):  # fmt: skip
        return True
    return bool(tokens) and all(m.group("phrase") is not None for m in tokens)


def parse(text: str, today: date, people: People) -> MailQuery:
    """The terms of `text` as filters; the rest (words and phrases, unquoted) as the text.
    An excluded word or phrase becomes a filter on the mail's subject and body."""
    conditions: list[Condition] = []
    words: list[str] = []
    for m in _TOKEN.finditer(text):
        neg = bool(m.group("neg"))
        name = _term(m.group("field"))
        value = m.group("qvalue") if m.group("qvalue") is not None else m.group("value")
        quoted = m.group("qvalue") is not None or m.group("phrase") is not None
        if quoted and m.group(0).count('"') == 1:  # the rest of the query would be its value
            raise QueryError(f'{m.group(0)}: the quote is not closed; close it with a "')
        if name in UNKEPT and value:
            raise QueryError(f"{m.group(0).lstrip('-')}: {UNKEPT[name]}; leave the term out")
        if name == "body" and value:  # the words rank the mail, as words outside terms do
            words += [] if neg else [value]
            if neg:
                conditions.append(_text(value, True))
            continue
        if name in TERMS and value:
            conditions.append(_condition(name, value, neg, today, people))
        elif m.group("phrase") is not None:
            phrase = m.group("phrase").strip()
            if phrase:
                conditions.append(_text(phrase, neg))
                words += [] if neg else [phrase]
        else:
            word = m.group(0).lstrip("-") if neg else m.group(0)
            if neg and word:
                conditions.append(_text(word, True))
            elif word:
                words.append(word)
    return MailQuery(" ".join(words), Filters(tuple(conditions), "terms"))


def _term(field: str | None) -> str:
    """A term's name, other tools' names for it as ours ("maildir" → "folder"); "" for none."""
    name = (field or "").lower()
    name = ALIASES.get(name, name)
    return name if name in TERMS or name in UNKEPT or name == "body" else ""


def _text(phrase: str, neg: bool) -> Condition:
    return f.words_in("text", ["d.title", "d.body"], [phrase], f'"{phrase}"', neg)


def _condition(name: str, value: str, neg: bool, today: date, people: People) -> Condition:
    if name == "from":
        return f.sender_is(people.containing(value), value, neg)
    if name in ("to", "cc"):
        # to: any recipient, To or Cc, as notmuch's and as "sent to Greg" in words; cc: Cc only
        cc = ["d.cc", "d.cc_names"]
        columns = ["d.recipients", "d.recipient_names", *cc] if name == "to" else cc
        return f.words_in(name, columns, value.split(), value, neg)
    if name == "subject":
        return f.subject_has(value, neg)
    if name == "folder":
        return f.words_in("folder", ["d.folder"], [value], value, neg)
    if name == "thread":
        return f.thread_is(value, neg)
    if name == "date":
        return f.date_in(date_term(value, today), neg)
    if name == "id":
        return f.message_id_is(value, neg)
    if value.lower().rstrip("s") != "attachment":
        raise QueryError(f"has:{value}: only has:attachment is understood")
    return f.has_attachment(neg)
