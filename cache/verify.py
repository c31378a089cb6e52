"""The lexical guard of a QA-bank hit: what sentence embeddings blur must match.

Two questions about another house number, another person or another attribute of the same thing
embed almost alike. Before a stored answer is served for a new question, the guard compares what
the embedding blurs: numbers and codes, dates (months, weekdays, years), names (capitalised words
that do not start the sentence), quoted strings, negation, the kind of question (when, where,
who, how much …) and, optionally, the content words (an attribute asked about: weight vs date).

Pure text: no model, a few microseconds a pair. It is strict on purpose: a question that drops
or adds a name, a number or an attribute is treated as another question (bench/studies/threshold.py
measures what that costs in paraphrases; bench/results/threshold.json).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cache.words import (
    AUXILIARIES,
    CONTRASTS,
    KIND_NOUNS,
    KIND_PHRASES,
    LIGHT_VERBS,
    MONTHS,
    NEGATIONS,
    NUMBER_WORDS,
    RELATIVE_DAYS,
    STOPWORDS,
    WEEKDAYS,
    fold,
    stem,
)

# "match": each content word of either question must be in the other; "covered": each content
# word of the asked question must be in the stored one, which may say more ("…the Pi-hole have
# at home" answers "…the Pi-hole"); "off": content words are left to the embedding
WORD_CHECKS = ("match", "covered", "off")

_TOKEN = re.compile(r"\w+(?:[-'’.,:/&]\w+)*%?")
_QUOTED = re.compile(r"[\"“”«»]([^\"“”«»]{2,})[\"“”«»]|(?<!\w)['‘]([^'‘’]{2,})['’](?!\w)")
_CODE = re.compile(r"^(?=.*\d)(?=.*[a-z])[a-z0-9]+$")  # rc3, q2, v3, 10k, tp669
_CLAUSE_GAP = re.compile(r"[,;:.?!()]")
_BEFORE_QUESTION_WORD = frozenset("and or but at by in on from to until since for".split())
_CONTRACTED = frozenset("m re ve ll d s".split())
_DIGITS = re.compile(r"\d+(?:[.:]\d+)*")
# an exclusion asks the complement of what the same words without it ask ("somewhere other
# than London", "everyone except Henrik"): a negation in all but the word
_EXCLUDING = re.compile(r"\b(?:except|excluding|other than|apart from|aside from)\b", re.I)
# the present, as a question asks about it instead of a date ("how many shares does she own now")
PRESENT = frozenset("now currently current presently nowadays".split())
# a date written in figures (9/30/00, 30-9-2000) or a year: a number that pins a time
_DATE_FIGURES = re.compile(r"^(?:\d{1,4}[/-]\d{1,2}(?:[/-]\d{1,4})?|1[89]\d\d|20\d\d)$")


@dataclass(frozen=True)
class Features:
    """What a question asks about, beyond what its embedding says."""

    kinds: frozenset[str]  # when, where, who, amount, count, … ; yesno; empty: what/which
    numbers: frozenset[str]  # digit runs, number words, codes such as q3, rc2, 214-c
    dates: frozenset[str]  # months, weekdays, relative days (years are numbers)
    names: frozenset[str]  # capitalised words not at the start, acronyms
    quoted: frozenset[str]
    negated: bool
    words: frozenset[str]  # content words, folded
    tokens: frozenset[str]  # every word, folded: where a name of the other question may appear
    # it asks about the present ("now", "currently")
    present: bool = False
    # it names a time: a month, weekday or relative day, a date in figures (9/30/00) or a year
    pinned: bool = False


@dataclass(frozen=True)
class Mismatch:
    """Why two questions are not the same question: the field and the terms that differ."""

    field: str
    terms: tuple[str, ...] = ()


def features(question: str) -> Features:
    quoted = frozenset(fold(a or b).strip() for a, b in _QUOTED.findall(question))
    found = list(_TOKEN.finditer(question))
    raw = [m.group() for m in found]
    folded = [fold(t) for t in raw]
    kinds, asking = _kinds(folded, _clause_starts(question, found, folded))
    numbers, dates, names, words = set(), set(), set(), set()
    negated = bool(_EXCLUDING.search(question))
    for i, (token, word) in enumerate(zip(raw, folded, strict=True)):
        kind = "stop" if i in asking else _classify(token, word, first=i == 0)
        if kind == "negation":
            negated = True
        elif kind == "number":
            numbers.update(_numbers(word))
        elif kind == "date":
            dates.add(_date(word))
        elif kind == "name":
            names.add(word)
        elif kind == "word":
            words.update(_parts(word))
    return Features(
        kinds,
        frozenset(numbers),
        frozenset(dates),
        frozenset(names),
        quoted,
        negated,
        frozenset(words),
        frozenset(folded) | {p for w in folded if "-" in w for p in w.split("-") if p},
        bool(PRESENT & set(folded)),
        bool(dates) or any(_DATE_FIGURES.match(w) for w in folded),
    )


def _parts(word: str) -> set[str]:
    """A content word, or the content words of a hyphenated one (per-person: per, person)."""
    if "-" not in word:
        return {word}
    return {p for p in word.split("-") if p and p not in STOPWORDS and p not in LIGHT_VERBS}


def _classify(token: str, word: str, first: bool) -> str:
    bare = word.replace("'", "")
    if bare in NEGATIONS or word.endswith("n't"):
        return "negation"
    if any(c.isdigit() for c in word) or any(p in NUMBER_WORDS for p in word.split("-")):
        return "number"
    if _is_date(token, word):
        return "date"
    if word in STOPWORDS or bare in STOPWORDS or _contraction(word):
        return "stop"
    if token.isupper() and len(token) > 1 or (token[0].isupper() and not first):
        return "name"
    return "word"


def _contraction(word: str) -> bool:
    """A stopword's contraction, capitalised or not: "I'm", "we're", "they've" (not D'Souza)."""
    parts = re.split("['’]", word)
    return len(parts) == 2 and parts[0] in STOPWORDS and parts[1] in _CONTRACTED


def _is_date(token: str, word: str) -> bool:
    if word in RELATIVE_DAYS or word in WEEKDAYS.values() or word in MONTHS.values():
        return word not in ("may", "march") or token[0].isupper()  # the verbs, lower case
    abbreviation = word.rstrip(".")
    return token[0].isupper() and (abbreviation in MONTHS or abbreviation in WEEKDAYS)


def _date(word: str) -> str:
    short = word.rstrip(".")[:3]
    return MONTHS.get(short) or WEEKDAYS.get(short) or word


def _numbers(word: str) -> set[str]:
    parts = word.replace(",", "").split("-")
    found = {NUMBER_WORDS[p] for p in parts if p in NUMBER_WORDS}
    found |= {p for p in parts if _CODE.match(p)}
    rest = "-".join(p for p in parts if p not in found and not _CODE.match(p))
    digits = (re.sub(r"\.0+$", "", d).lstrip("0") or "0" for d in _DIGITS.findall(rest))
    return found | set(digits)


def _clause_starts(text: str, found: Sequence[re.Match], words: Sequence[str]) -> set[int]:
    """Where a question word may start a question: first, after punctuation, after a conjunction
    or a preposition ("and where", "at what time"), not inside a clause ("draw when Daan …")."""
    starts = {0}
    for i in range(1, len(found)):
        gap = text[found[i - 1].end() : found[i].start()]
        if _CLAUSE_GAP.search(gap) or words[i - 1] in _BEFORE_QUESTION_WORD:
            starts.add(i)
    return starts


def _kinds(words: Sequence[str], starts: set[int]) -> tuple[frozenset[str], set[int]]:
    """The kinds of question asked, and the positions of the words that ask them."""
    kinds, asking, i = set(), set(), 0
    while i < len(words):
        for phrase, kind in KIND_PHRASES:
            if i in starts and tuple(words[i : i + len(phrase)]) == phrase:
                kinds.add(kind)
                asking.update(range(i, i + len(phrase)))
                i += len(phrase) - 1
                break
        i += 1
    if not kinds and words and words[0] in AUXILIARIES and "what" not in words:
        kinds.add("yesno")
    return frozenset(kinds), asking


class Guard:
    """Refuses a stored question that asks something the new one does not.

    Both questions must agree on negation and on their numbers, dates, quoted strings and names
    (a name of one must be a word of the other); the kinds of question must be the same when both
    have one ("what"/"which" questions have none); no scale word may differ (CONTRASTS). With
    `words` = "match", every content word of each (up to a suffix, light verbs aside) must be a
    word of the other too: a question that swaps "weight" for "date" asks another thing.
    "covered" asks that only of the asked question's words (bench/results/threshold.json: it
    serves questions that drop a qualifier, per person → total); "off" leaves the content words
    to the embedding."""

    def __init__(self, words: str = "match") -> None:
        if words not in WORD_CHECKS:
            raise ValueError(f"words: one of {', '.join(WORD_CHECKS)}, got {words!r}")
        self.words = words

    def check(self, asked: str, stored: str) -> Mismatch | None:
        """None when `stored`'s answer answers `asked` as far as the text tells; else why not."""
        new, old = features(asked), features(stored)
        return _terms(new, old) or _contrast(new, old) or self._content(new, old)

    def slots(self, asked: str, stored: str, line: str = "", mail: str = "") -> Mismatch | None:
        """The guard kept for what a paraphrase cannot reword, where the evidence decides the
        rest: the two questions agree on negation, on their kinds (when both have one) and on
        their scale words (CONTRASTS); each name, number, date and quoted string of `asked` is
        a term of `stored` (the new question may name less, never another); and no content
        word `asked` adds stands in `line`, the stored answer's quoted lines (a line that
        answers both "who is the photographer" and "who is the florist" names both). A name
        may also be one of `mail`'s, the stored answer's mail's header (its sender and
        subject), where `asked` keeps every name of `stored`: a paraphrase names the mail it
        recalls ("the lunch Sherri wrote about"), a near-miss puts another name in the place of
        the stored question's."""
        new, old = features(asked), features(stored)
        if new.negated != old.negated:
            return Mismatch("negation")
        if new.kinds and old.kinds and new.kinds != old.kinds:
            return Mismatch("kind", tuple(sorted(new.kinds ^ old.kinds)))
        # an answer pinned to a time does not answer for the present: naming less is no
        # paraphrase here, since "now" takes the date's place
        if new.present and not new.pinned and old.pinned and not old.present:
            return Mismatch("dates", ("now",))
        # the header's names count where the new question keeps every name of the stored one:
        # it names the mail besides, not another person in the stored one's place
        kept = all(t in new.tokens or _named(t, new.tokens) for t in old.names)
        header = features(mail).tokens if mail and kept else frozenset()
        for field in ("numbers", "dates", "quoted", "names"):
            known = old.tokens | header if field == "names" else old.tokens
            missing = {t for t in getattr(new, field) - getattr(old, field) - known
                       if not _named(t, known) and not _parts_named(t, known)}  # fmt: skip
            if missing:
                return Mismatch(field, tuple(sorted(missing)))
        said = {stem(t) for t in features(line).tokens} if line else set()
        added = {w for w in _unmatched(new.words, old) if stem(w) in said}
        if added:
            return Mismatch("words", tuple(sorted(added)))
        return _contrast(new, old)

    def _content(self, new: Features, old: Features) -> Mismatch | None:
        if self.words == "off":
            return None
        unmatched = _unmatched(new.words, old)
        if self.words == "match":
            unmatched += _unmatched(old.words, new)
        return Mismatch("words", tuple(unmatched)) if unmatched else None


def _terms(new: Features, old: Features) -> Mismatch | None:
    if new.negated != old.negated:
        return Mismatch("negation")
    if new.kinds and old.kinds and new.kinds != old.kinds:
        return Mismatch("kind", tuple(sorted(new.kinds ^ old.kinds)))
    for field in ("numbers", "dates", "quoted"):
        differ = getattr(new, field) ^ getattr(old, field)
        if differ:
            return Mismatch(field, tuple(sorted(differ)))
    differ = (new.names - old.tokens) | (old.names - new.tokens)
    return Mismatch("names", tuple(sorted(differ))) if differ else None


def _named(term: str, tokens: Iterable[str]) -> bool:
    """A term another question names in another form: the same stem, or a word of five letters
    or more that the other's word begins with (Africa, African)."""
    return any(
        stem(term) == stem(t) or (min(len(term), len(t)) >= 5 and (t.startswith(term) or
                                                                  term.startswith(t)))
        for t in tokens
    )  # fmt: skip


def _parts_named(term: str, tokens: Iterable[str]) -> bool:
    """A hyphenated term the other question writes as words ("Rice-ALP", "Rice ALP")."""
    parts = [p for p in term.split("-") if p]
    return len(parts) > 1 and all(_named(p, tokens) for p in parts)


def _contrast(new: Features, old: Features) -> Mismatch | None:
    ours, theirs = _poles(new.tokens), _poles(old.tokens)
    for group in range(len(CONTRASTS)):
        a = {pole for g, pole in ours if g == group}
        b = {pole for g, pole in theirs if g == group}
        if a and b and a != b:
            return Mismatch("contrast", (f"group {group}",))
    return None


def _poles(tokens: Iterable[str]) -> set[tuple[int, int]]:
    return {_POLES[s] for s in map(stem, tokens) if s in _POLES}


def _unmatched(words: Iterable[str], other: Features) -> list[str]:
    """The content words (light verbs aside) with neither their stem nor a word of their pole
    among the other question's words, nor a kind the other question asks ("date": when)."""
    stems = {stem(t) for t in other.tokens}
    poles = {_POLES[s] for s in stems if s in _POLES}
    asked = {n for kind in other.kinds for n in KIND_NOUNS.get(kind, ())}
    return sorted(
        w
        for w in words
        if w not in LIGHT_VERBS
        and w not in asked
        and stem(w) not in stems
        and _POLES.get(stem(w)) not in poles
    )


_POLES: dict[str, tuple[int, int]] = {
    stem(word): (g, p)
    for g, group in enumerate(CONTRASTS)
    for p, pole in enumerate(group)
    for word in pole
}
