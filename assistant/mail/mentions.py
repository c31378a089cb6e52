"""The people a question names, and what it says they did: sent the mail, where the words say
so ("from Sherri", "what did Vince say", "Steve's note", "Amelia wrote", "Mark Golden was
asking"); received it ("emails
to Greg", "tell Thames Fulton", "what did I send David"); or else took part ("what did Gresham
want", "what Linda and I agreed", "the offsite with Rob": a participant, who sent, received, was
copied or is named in the text). A person named beside "I" or "me" is a participant, never the
sender. Rules only, never a model; which names are people the address book decides
(mail/people.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from assistant.mail.dates import HOLIDAYS, MONTHS, WEEKDAYS
from assistant.mail.person_names import LOWER, UPPER

FROM, TO, WITH = "from", "to", "with"
# a capitalised word of any Latin, Greek or Cyrillic letters (Åsa, Tomás), or an initial
_NAME_WORD = rf"O['’]{UPPER}{LOWER}+|{UPPER}{LOWER}(?:[^\W\d_]|['’-])*|{UPPER}\.?"
# a surname's particles, lowercase between two capitalised words ("Bram de Vries", "Jan van
# der Berg", "Leonardo da Vinci"); the capitalised ones are name words already ("De Vries")
_PARTICLE = r"(?:de|da|di|del|della|der|den|des|du|van|von|ter|ten|dos|das|le|la|bin|ibn)"
_RUN = re.compile(rf"(?<![\w'’])(?:{_NAME_WORD})(?:\s+(?:{_PARTICLE}\s+)*(?:{_NAME_WORD}))*")
_QUOTED = re.compile(r"(?<!\w)['‘\"“][^'\"“”‘’]{3,}?['’\"”](?!\w)")
# capitalised words that start a question or a clause and name no one
_NOT_NAMES = (
    frozenset(
        """what who whom whose when where why how which did does do is was were are has have had
    can could will would should shall may might must any anything anyone everything the a an
    in on at for from to of by with about since after before until during earlier last this
    next i i'm i've i'd my me we our us you your he she they it its his her their please tell
    show find list give get remind summarize summarise and or but if so then there here
    yes no ok thanks hi hello dear re fw fwd""".split()
    )
    | frozenset(MONTHS)
    | frozenset(WEEKDAYS)
    | {w for h in HOLIDAYS for w in h.split()}
)
# the words that make someone the sender: "from X", "X's note", "X wrote / told / asked", "did
# X send / say / remind"; the sender includes mail that carries theirs (mail/filters.py)
_SEND = (
    r"send|write|write back|say|ask|tell|reply|answer|forward|announce|remind|suggest|propose|"
    r"offer|mention|e-?mail|mail|share|recommend|invite|warn|explain|report|request|respond"
)
_SENT = (
    r"sent|wrote|said|asked|told|replied|answered|forwarded|announced|reminded|suggested|"
    r"proposed|offered|mentioned|e-?mailed|mailed|shared|recommended|invited|warned|explained|"
    r"reported|requested|responded|writes|says|asks|sends"
)
_SENDING_ING = r"asking|saying|proposing|suggesting|offering|writing|sending|announcing|telling"
_MAIL_NOUN = r"mail|e-?mail|message|note|letter|memo"
_BESIDE_ME_AFTER = re.compile(r"^\s*(?:,\s*)?(?:and|&)\s+(?:I|me|myself)\b")
_BESIDE_ME_BEFORE = re.compile(r"\b(?:I|me|myself)\s+(?:and|&)\s+$")
_FROM_BEFORE = re.compile(r"\bfrom\s+$", re.IGNORECASE)
_AFFILIATION_BEFORE = re.compile(r"[A-Z][\w'’-]*\s+(?:from|at|of)\s+(?:the\s+)?$")
_POSSESSIVE_MAIL = re.compile(
    rf"^['’]s\s+(?:(?:last|first|latest|recent|long|short)\s+)?(?:{_MAIL_NOUN})s?\b"
)
_WAS_BEFORE = re.compile(r"\b(?:was|is|were)\s+$", re.IGNORECASE)
_ING_AFTER = re.compile(rf"^(?:\s+(?:from|at|of)\s+[A-Z][\w ]*?)?\s+(?:{_SENDING_ING})\b")
_DID_BEFORE = re.compile(r"\b(?:did|does|do|has|had|will|would|could|can)\s+$", re.IGNORECASE)
_SEND_AFTER = re.compile(rf"^(?:['’]s)?\s+(?:(?:first|also|just|ever)\s+)?(?:{_SEND})\b")
_SENT_AFTER = re.compile(rf"^\s+(?:\w+ly\s+)?(?:{_SENT})\b")
_TO_BEFORE = re.compile(
    r"\b(?:sent|send|wr[io]te(?:\s+back)?|repl(?:y|ied)|e-?mails?|mails?|messages?|"
    r"forward(?:ed)?|letters?|notes?|went|go(?:ne)?|cc|cc'd|copied)(?:\s+\w+){0,2}?\s+to\s+$",
    re.IGNORECASE,
)
_OBJECT_BEFORE = re.compile(
    r"\b(?:send|sent|tell|told|ask|asked|forward|forwarded|e-?mail|e-?mailed|remind|reminded|"
    r"invite|invited|answer|answered|give|gave|cc|cc'd|copy|copied|thank|thanked)\s+$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Mention:
    """A name in a question, the role the words give it, and whether they say so (a role
    the words give: "from X", "X's note", "to X"; a name seen in passing is a participant)."""

    name: str
    role: str
    start: int
    end: int
    said: bool


def mentions(question: str) -> list[Mention]:
    """The names of `question` (runs of capitalised words, outside quotes), each with its role."""
    hidden = _QUOTED.sub(lambda m: " " * len(m.group(0)), question)
    found = []
    for match in _RUN.finditer(hidden):
        for start, end in _names_in(hidden, match.start(), match.end()):
            end -= 2 if re.search(r"['’]s$", hidden[start:end]) else 0
            role, said = _role(hidden, start, end)
            if _affiliation(hidden, start, found):
                continue
            found.append(Mention(_clean(hidden[start:end]), role, start, end, said))
    return [m for m in found if m.name]


def _names_in(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The run without the words that name no one around it ("What", "Did", "In April")."""
    words = [(m.start() + start, m.end() + start) for m in re.finditer(r"\S+", text[start:end])]
    spans: list[tuple[int, int]] = []
    current: list[tuple[int, int]] = []
    for s, e in words:
        if _clean(text[s:e]).lower() in _NOT_NAMES:
            if current:
                spans.append((current[0][0], current[-1][1]))
            current = []
        else:
            current.append((s, e))
    if current:
        spans.append((current[0][0], current[-1][1]))
    return [(s, e) for s, e in spans if len(_clean(text[s:e])) > 1]


def _clean(name: str) -> str:
    """Possessives and trailing punctuation off: "Jim Dent's" → "Jim Dent"."""
    name = re.sub(r"['’]s$", "", name.strip())
    return name.strip(".'’-")


def _affiliation(text: str, start: int, found: list[Mention]) -> bool:
    """ "Mark Golden from Dow Jones", "Laura Goldberg of the Chronicle": where someone works."""
    if not found or not _AFFILIATION_BEFORE.search(text[:start]):
        return False
    gap = text[found[-1].end : start]
    return bool(re.fullmatch(r"(?:['’]s)?\s+(?:from|at|of)\s+(?:the\s+)?", gap))


def _role(text: str, start: int, end: int) -> tuple[str, bool]:
    before, after = text[:start], text[end:]
    if _BESIDE_ME_AFTER.match(after) or _BESIDE_ME_BEFORE.search(before):
        return WITH, True
    if _FROM_BEFORE.search(before) or _POSSESSIVE_MAIL.match(after):
        return FROM, True
    if _DID_BEFORE.search(before) and _SEND_AFTER.match(after):
        return FROM, True
    if _WAS_BEFORE.search(before) and _ING_AFTER.match(after):
        return FROM, True
    if _SENT_AFTER.match(after) and not re.search(r"\b(?:and|&)\s+$", before):
        return FROM, True
    if _TO_BEFORE.search(before) or _OBJECT_BEFORE.search(before):
        return TO, True
    return WITH, False
