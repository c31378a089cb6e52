"""A person's name in the forms mail gives it: first and last from a display name ('Golden, Mark
A', 'Dr. Vince Kaminski': `nameparser`), from an address's local part (steve.kean@ → Steve Kean,
jdent@ → J. Dent), the nicknames of a first name (the `nicknames` package: Liz/Elizabeth,
Steve/Steven, Rob/Robert), and the names a mail greets someone with ("Dave, please …") or is
signed with (a last line "Steve" or "-Liz"). Names are matched with their accents folded
(Tomás, Tomas; Åsa Sjöberg, Asa Sjoberg): mail users type names without them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from nameparser import HumanName
from nameparser.config import CONSTANTS
from nicknames import NickNamer

from cache.words import unaccented

_LETTERS = re.compile(r"[^\W\d_]+")  # letters of any script: Tomás is one word, not "tom s"
_NAME_TEXT = re.compile(r"^[^\W\d_](?:[^\W\d_]|[ .,'’-])*$")
# letters that NFKD does not take apart into a letter and its marks
_UNFOLDED = str.maketrans({"ø": "o", "æ": "ae", "œ": "oe", "ß": "ss", "ł": "l", "đ": "d", "ð": "d",
                           "þ": "th", "ı": "i"})  # fmt: skip
# a capital and a small letter of the Latin, Greek and Cyrillic scripts, for a pattern that
# reads a name as capitalised ('Åsa', 'Tomás'), which [A-Z][a-z] cannot
UPPER = "[" + "".join(c for c in map(chr, range(0x41, 0x530)) if c.isupper()) + "]"
LOWER = "[" + "".join(c for c in map(chr, range(0x61, 0x530)) if c.islower()) + "]"
# words that make a display name an organisation's, a list's or a service's, not a person's
ORG_WORDS = frozenset(
    """announcement announcements team office news newsletter newsletters update updates service
    services inc llc ltd co corp corporation company club foundation group hotline report reports
    department dept center centre council committee association support alert alerts online
    mail admin desk list members digest daily weekly info information notification notifications
    the of and for in at on on-line communications events marketing sales customer customers
    bulletin network networks systems technology technologies partners management staff board
    society institute university college school magazine journal times post press radio""".split()
)
# first words of a mail that greet no one ("Thanks," "All,")
_NOT_GREETED = frozenset(
    """thanks thank hi hello hey dear all everyone everybody team folks guys gentlemen ladies
    good greetings sorry yes no ok okay please fyi attached here this the i we just
    congratulations congrats great sure again morning afternoon evening regards best cheers
    note update re fw fwd subject to from sent date cc importance""".split()
)
_FIRST = rf"{UPPER}{LOWER}{{1,15}}"  # a first name as mail writes it: Dave, Åsa
_GREETING = re.compile(
    r"^\s*(?i:(?:dear|hi|hello|hey|greetings,?|good (?:morning|afternoon|evening),?)\s+)?"
    rf"(?P<name>{_FIRST})\s*(?:[,:!\-–—]|\.\s)"
)
_GREETING_TWO = re.compile(
    rf"^\s*(?i:(?:dear|hi|hello|hey)\s+)?(?P<name>{_FIRST})\s+(?:and|&)\s+"
    rf"(?P<other>{_FIRST})\s*[,:!]"
)
_THANKS = re.compile(rf"^\s*(?i:thanks|thank you)[^,.!\n]{{0,40}},\s*(?P<name>{_FIRST})[.!]")
_SIGNED = re.compile(
    r"^\s*(?i:(?:thanks|thank you|regards|best|cheers|love|later|take care),?\s+)?"
    rf"[-–—~]{{0,2}}\s*(?P<name>{_FIRST})\s*$"
)


@dataclass(frozen=True)
class NameForm:
    """A name as first and last (lowercase; '' when unknown; a first of one letter is an
    initial, as jdent@ gives)."""

    first: str
    last: str

    def full(self) -> bool:
        return len(self.first) > 1 and bool(self.last)


def fold(text: str) -> str:
    """`text` lowercase with its accents off, as names are matched: 'Tomás' → 'tomas',
    'Åsa Sjöberg' → 'asa sjoberg', 'Søren' → 'soren'."""
    low = text.lower()
    if low.isascii():
        return low
    return unaccented(low.translate(_UNFOLDED))


@lru_cache(maxsize=1)
def _namer() -> NickNamer:
    return NickNamer()


@lru_cache(maxsize=4096)
def nicknames(first: str) -> frozenset[str]:
    """The names `first` goes by or stands for: Liz → Elizabeth, Lisa …; Steven → Steve."""
    namer = _namer()
    word = first.lower()
    return frozenset(namer.nicknames_of(word) | namer.canonicals_of(word)) - {word}


def known_first(word: str) -> bool:
    """Whether `word` is a given name the nickname list knows (it holds only names that have
    nicknames, so a name it lacks may still be one)."""
    w = word.lower()
    return bool(nicknames(w))


def same_first(a: str, b: str) -> bool:
    """The same first name, or one the nickname of the other."""
    return a == b or b in nicknames(a) or a in nicknames(b)


def shortened(a: str, b: str) -> bool:
    """One first name the other cut short (Stan, Stanley; Chris, Christopher): how people
    shorten a name the nickname list may not hold. Three letters at least, so an initial or
    two letters join nothing."""
    short, full = sorted((a.lower(), b.lower()), key=len)
    return len(short) >= 3 and len(full) > len(short) and full.startswith(short)


def one_persons(a: NameForm, b: NameForm) -> bool:
    """Whether two names may be one person's: a name in common (Jeff Skilling, Jeffrey K
    Skilling; Skilling, Jeff), or first names one the nickname, the short form or the initial
    of the other (Liz Tilney, Elizabeth Smith: a name changed). Daan Verhoeven and Priya Nair
    are two people."""
    if {a.first, a.last} & {b.first, b.last}:
        return True
    x, y = a.first, b.first
    return same_first(x, y) or shortened(x, y) or min(len(x), len(y)) == 1 and x[0] == y[0]


def named_by(address: str, form: NameForm) -> bool:
    """Whether an address's local part names the person: jeff.skilling@, vmcarthur@ (the
    last name in it), maya@ (it starts with the first)."""
    local = "".join(_LETTERS.findall(fold(address.rsplit("@", 1)[0])))
    return len(form.last) > 2 and form.last in local or local.startswith(form.first)


def words(name: str) -> list[str]:
    """The words of a name, folded ('Tomás Ferreira' → tomas, ferreira)."""
    return _LETTERS.findall(fold(name))


def org_like(name: str) -> bool:
    """A display name of an organisation or a list ('Enron Announcements', 'Calyx & Corolla')."""
    return "&" in name or any(w in ORG_WORDS for w in words(name))


@lru_cache(maxsize=65536)
def from_display(name: str) -> NameForm | None:
    """First and last of a display name; None for one that is no person's name (one word,
    an organisation's, or text such as 'aroman .com')."""
    text = " ".join(name.replace('"', " ").split())
    if not text or "@" in text or not _NAME_TEXT.match(text) or org_like(text):
        return None
    if re.search(r"\.(?:com|net|org|edu|gov)\b", text, re.IGNORECASE):
        return None
    if (plain := _plain(text)) is not None:
        return plain
    parsed = HumanName(text)
    first, last = words(parsed.first), words(parsed.last)
    if not first or not last or len(words(text)) > 4:
        return None
    return NameForm(first[0], last[-1])


def _plain(text: str) -> NameForm | None:
    """'First Last' or 'First M. Last' with no title, suffix, particle or comma: read here,
    as nameparser would, at a fraction of its cost (an address book reads thousands)."""
    tokens = fold(text).replace(".", " ").split()
    if not 2 <= len(tokens) <= 3 or "," in text or len(tokens[0]) < 2 or len(tokens[-1]) < 2:
        return None
    if len(tokens) == 3 and len(tokens[1]) > 1:
        return None
    if any(t in _special() for t in tokens):
        return None
    if not all(t.isalpha() for t in tokens):
        return None
    return NameForm(tokens[0], tokens[-1])


def particle(word: str) -> bool:
    """A surname's particle ('de', 'van', 'von', 'der', 'da'), folded, as nameparser lists them."""
    return word in CONSTANTS.prefixes


@lru_cache(maxsize=1)
def _special() -> frozenset[str]:
    """nameparser's titles, suffixes and particles ('dr', 'jr', 'van')."""
    c = CONSTANTS
    return frozenset(c.titles | c.suffix_acronyms | c.suffix_not_acronyms | c.prefixes)


@lru_cache(maxsize=65536)
def from_address(address: str) -> NameForm | None:
    """First and last from an address's local part: steve.kean, steve_kean, steve-kean → Steve
    Kean, steven.j.kean → Steven Kean. None when the part says no name (jdent, boethia)."""
    local = address.lower().rsplit("<", 1)[-1].split("@", 1)[0]
    pieces = [p for p in re.split(r"[._-]+", re.sub(r"\d+", "", local)) if p]
    if len(pieces) == 2 and all(p.isalpha() for p in pieces):
        first, last = pieces
        if len(last) > 1 and (len(first) > 1 or len(last) > 2):
            return NameForm(first, last)
        return None
    if len(pieces) == 3 and len(pieces[1]) == 1 and pieces[0].isalpha() and pieces[2].isalpha():
        return NameForm(pieces[0], pieces[2])  # steven.j.kean
    return None


def initial_form(address: str) -> NameForm | None:
    """jdent@, bpaddock@: an initial and a last name, read only when a person of that last name
    and initial is known (the caller checks): on its own, 'jdent' could be anything."""
    local = address.lower().rsplit("<", 1)[-1].split("@", 1)[0]
    if local.isalpha() and 4 <= len(local) <= 16:
        return NameForm(local[0], local[1:])
    return None


def greeted(body_start: str) -> list[str]:
    """The names a mail's first line greets ("Dave, please …", "Dear Tom,", "Thanks, Rod!",
    "Reed and Lana, thanks …": a couple on one address), lowercase; [] when it greets no one
    by name."""
    first_line = body_start.strip().split("\n", 1)[0]
    for pattern in (_GREETING_TWO, _GREETING, _THANKS):
        match = pattern.match(first_line)
        names = [fold(n) for n in match.groups() if n] if match else []
        if names and not set(names) & _NOT_GREETED:
            return names
    return []


def signed(body_end: str) -> str:
    """The name a mail is signed with: one of its last three lines a lone first name ("Steve",
    "-Liz", "Thanks, Rob"), lowercase; '' when none is."""
    lines = [line for line in body_end.strip().splitlines() if line.strip()][-3:]
    for line in reversed(lines):
        match = _SIGNED.match(line)
        if match and fold(match.group("name")) not in _NOT_GREETED:
            return fold(match.group("name"))
    return ""
