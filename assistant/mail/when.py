"""Whether a date in a question's words is when the mail was sent, or what the mail is about.

A date filters the mail only where the question asks about sending: "last week's note", "in
October he wrote", "what came in yesterday", "the mail from March". Where the date names a
thing ("the Christmas plans", "the March meeting", "the Christmas dates"), belongs to one ("the
conference in June", "plans for Christmas") or is what is asked about ("about Christmas"), it
is a topic: such mail is written before or after it, and the date stays a word to rank by."""

from __future__ import annotations

import re

from assistant.mail.date_words import Found

MAIL_NOUNS = frozenset(
    """mail mails email emails e-mail e-mails message messages note notes letter letters memo
    memos newsletter newsletters thread threads reply replies answer answers invitation
    invitations announcement announcements update updates inbox request requests response
    responses fax faxes report reports""".split()
)
SENDING = re.compile(
    r"\b(?:sent|send|sends|sending|wrote|write|writes|written|writing|said|say|says|asked|ask|"
    r"asks|emailed|e-mailed|email|e-mail|replied|reply|replies|forwarded|forward|announced|"
    r"announce|received?|receiving|got|get|gets|heard|hear|came in|come in|arrived?|mailed|"
    r"told|tell|reminded|remind|invited|invite)\b",
    re.IGNORECASE,
)
_JUST_PAST = re.compile(r"\b(?:last|past|yesterday|today|this|earlier|ago|since)\b", re.I)
# a word after a date that is no noun it modifies ("in October he wrote", "sent on May 5 about")
_NOT_NOUNS = frozenset(
    """about from to in on at for with and or but by of as than that which who what when where
    why how if so did does do was were is are has have had will would can could should may
    might he she they i we you it his her their my our your me him them us the a an this
    these those there here please after before since until while because then again last next
    ago later earlier yet also just still only even""".split()
)
_TIMES_OF_DAY = frozenset({"morning", "afternoon", "evening", "night", "lunchtime", "noon"})
_TOPIC_PREPOSITIONS = frozenset({"about", "for", "over", "regarding", "re"})
_ATTACHING = frozenset({"in", "on", "of", "during", "at", "for", "from", "around"})
_DETERMINERS = frozenset(
    {"the", "a", "an", "our", "his", "her", "their", "my", "your", "that", "this", "its"}
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")


def of_sending(question: str, found: Found) -> bool:
    """Whether `found` (a date read from `question`) dates the mail (see the module's doc)."""
    words = found.words.split()
    lead = words[0].lower() if words and words[0].lower() in _ATTACHING | {"since"} else ""
    before = _WORD.findall(question[: found.start].lower())
    after = question[found.end :]
    noun = _modified_noun(after, named=bool(before) and before[-1] in _DETERMINERS)
    if noun:
        return noun in MAIL_NOUNS
    prep = lead or (before[-1] if before else "")
    if prep in _TOPIC_PREPOSITIONS and not (prep == "for" and _JUST_PAST.search(found.words)):
        return False  # "plans for Christmas"; but "what did I ask him for this week" is asked
    if prep in _ATTACHING:
        upto = before if lead else before[:-1]  # the words up to the one the date follows
        head = upto[-1] if upto else ""
        if head in MAIL_NOUNS:
            return True
        if head and not SENDING.fullmatch(head) and _in_noun_phrase(upto):
            return False
    return bool(SENDING.search(question) or _JUST_PAST.search(found.words) or _of_mail(question))


def _of_mail(question: str) -> bool:
    """The question speaks of mail ("emails to Greg in October", "the newsletter in May")."""
    return any(w in MAIL_NOUNS for w in _WORD.findall(question.lower()))


def _modified_noun(after: str, named: bool = False) -> str:
    """The noun a date stands before ("Christmas plans", "last week's note", "the November
    2000 CEO conference"), lowercase; '' when the date is followed by punctuation or a word
    that is no noun (a capitalised word may be a name: "in October Steve wrote"). After a
    determiner (`named`) the date is inside a noun phrase, so names there modify the noun too:
    "the April 12 Derrick meeting", "the March Enron Board meeting"."""
    if named:
        after = re.sub(r"^(?:['’]s)?((?:\s+[A-Z][\w'’&.-]*){1,3})(?=\s+[a-z])", "", after)
    match = re.match(r"(?:['’]s)?\s+([a-z][a-z'-]*|[A-Z][A-Z0-9]+\b)", after)
    if match and match.group(1).lower() in _TIMES_OF_DAY:  # "yesterday morning": still the date
        return _modified_noun(after[match.end() :])  # "the Christmas morning service": a thing
    if not match or match.group(1).lower() in _NOT_NOUNS:
        return ""
    return match.group(1).lower()


def _in_noun_phrase(upto: list[str]) -> bool:
    """The words up to the preposition name a thing: a determiner among the three before
    the last ("the conference in June", "our dinner on Friday")."""
    return any(w in _DETERMINERS for w in upto[-4:-1])
