"""The support check of the model's sentence: does every number, date, amount, code, quoted string,
name and content word of it stand in the quoted lines (or the question)? Numbers match whatever
their separators, dates whatever their order, names as phrases. A term of the kind asked for that
disagrees with the quote's counts against it too. answer/shape.py decides from the result whether
the sentence is shown plain, marked, or dropped."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from assistant.answer.text import (
    MONTH_OF,
    STOPWORDS,
    WEEKDAY_OF,
    asked_kinds,
    kind_terms,
    stems,
)

_MONTH = "|".join(sorted(MONTH_OF, key=len, reverse=True))
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_DATES = (  # "9 June", "9-11 June", "9th of June"; "June 9", "June 9th"; "2026-06-09"
    re.compile(rf"\b{_DAY}(?:\s*(?:-|to|and)\s*{_DAY})?\s+(?:of\s+)?({_MONTH})\b\.?", re.I),
    re.compile(rf"\b({_MONTH})\.?\s+{_DAY}(?:\s*(?:-|to|and)\s*{_DAY})?\b(?![:.,]\d)", re.I),
    re.compile(r"\b\d{4}-(\d{2})-(\d{2})\b"),
)
_UNIT = r"%|[um]?A|k?Wh|[kMG]B|km|kg|g|mm|cm|ml|mV|V|dBm|h|x"
_NUMBER = re.compile(rf"(?<![\w.,])\d+(?:[.,:]\d+)*(?=(?:{_UNIT})?(?!\w))")  # "18uA" is 18
_MEASURE = re.compile(rf"\d+(?:[.,]\d+)*(?:{_UNIT})")
_CODE = re.compile(  # "FW-1184", "KD-Q-26-0317", "K7QX4M", "v3.2", "RC2"
    r"(?<![\w.,-])(?:[^\W\d_]+\d*(?:-\w+)+|(?=\w*\d)(?=\w*[^\W\d_])\w+(?:\.\d+)*)(?![\w-])"
)
_QUOTED = re.compile(r"[\"“”„]([^\"“”„\n]{2,80})[\"“”]")
_CONTENT = re.compile(r"\w+(?:[.,:]\d+)*")  # a word, or a figure with its separators
_LETTERS = re.compile(r"[^\W\d_]+(?:['-][^\W\d_]+)*")
_RUN_TOKEN = re.compile(r"[^\W\d_]+(?:['-][^\W\d_]+)*|[^\s]")  # any other mark ends a run
_DURATION = re.compile(r"\b(\d+)\s+minutes?\s+(?:and\s+)?(\d{1,2})\s+seconds?\b")  # "7:35"
_NOT_NAMES = frozenset("EUR USD SEK GBP CHF VAT BTW".split())  # break a run of names
_FOLD = str.maketrans(
    {
        "–": "-",
        "—": "-",
        "−": "-",
        "‐": "-",
        "‑": "-",
        "\u00a0": " ",
        "\u202f": " ",
        "€": " EUR ",
        "µ": "u",
        "μ": "u",
        "’": "'",
        "‘": "'",
    }
)
_REFUSAL = re.compile(
    r"\b(could not|couldn't|can't|cannot|did not|didn't|unable to)\s+(find|see|locate)"
    r"|\bno (information|mention|record)\b|\bnot (mentioned|found|in your mail)\b"
    r"|\bdon't know\b|\bdoes(n't| not) (say|mention)\b",
    re.IGNORECASE,
)
_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
).split()
_COMMON = frozenset(  # capitalised at a sentence's start, these are no names
    """a an the i i'm i'll i've i'd it its it's he she they we you your our my his her their
    this that these those there here what which who whom whose when where why how yes no not
    none nothing all both each every some most many much more less only also then so and but
    or if because since as at by for from in into of on to with without after before during
    until about over under again once first second third next last according based
    unfortunately however sorry please note sure okay ok well around approximately roughly just
    still already yet soon today tomorrow yesterday tonight is are was were be been do does did
    have has had will would can could should may might must let let's although though while
    instead plus total overall""".split()
) | frozenset(_NUMBER_WORDS)


@dataclass(frozen=True)
class _Known:
    """What the sources and the question hold, in the forms the answer's terms are looked up."""

    dates: frozenset[tuple[int, int]]
    numbers: frozenset[str]
    codes: frozenset[str]
    words: tuple[str, ...]
    text: str

    @classmethod
    def of(cls, text: str) -> _Known:
        words = tuple(_word(w) for w in _LETTERS.findall(text))
        codes = frozenset(c.lower() for c in _CODE.findall(text))
        numbers = {f for n in _NUMBER.findall(text) for f in _number_forms(n)}
        inside = (n for c in codes for n in _NUMBER.findall(c.replace("-", " ")))
        numbers |= {f for n in inside for f in _number_forms(n)}
        numbers |= {str(i) for i, w in enumerate(_NUMBER_WORDS) if w in words}
        numbers |= {f"{m}:{int(sec):02d}" for m, sec in _DURATION.findall(text)}
        dates = frozenset(date for _, date in _dates(text))
        return cls(dates, frozenset(numbers), codes, words, " ".join(text.lower().split()))


def unsupported_terms(answer: str, sources: Sequence[str], question: str) -> list[str]:
    """The numbers, dates, codes, quoted strings and capitalised names of `answer` that appear
    in neither `sources` nor `question`, as the answer writes them. Numbers match on their
    exact digits ("2001" is no support for "20011"), whatever their separators ("€1.250,00",
    "EUR 1,250.00"), unit spacing ("18uA", "18 µA") or date order ("9 June", "June 9th").
    Sentences that say the answer was not found are left out: they claim nothing."""
    text = _claimed(answer.translate(_FOLD))
    if not text.strip():
        return []
    known = _Known.of("\n".join([*sources, question]).translate(_FOLD))
    return list(dict.fromkeys(term for term, held in _claims(text, known) if not held))


def _claims(text: str, known: _Known) -> Iterator[tuple[str, bool]]:
    """(term, whether the sources hold it) for each term of the text: dates first, then quoted
    strings, codes, numbers and names, each taken out of the text once checked."""
    dates = list(_dates(text))
    for (start, end), date in dates:
        yield text[start:end].strip(" ."), date in known.dates
    text = _blank(text, [span for span, _ in dates])
    for m in _QUOTED.finditer(text):
        yield m.group(0), " ".join(m.group(1).lower().split()) in known.text
    text = _QUOTED.sub(" ", text)
    coded = [m for m in _CODE.finditer(text) if _is_code(m.group())]
    yield from ((m.group(), _code_held(m.group(), known)) for m in coded)
    text = _blank(text, [m.span() for m in coded])
    for m in _NUMBER.finditer(text):
        yield m.group(), bool(_number_forms(m.group()) & known.numbers)
    yield from _names(_NUMBER.sub(" ", text), known)


def _code_held(code: str, known: _Known) -> bool:
    """The code is in the sources, or it joins codes and numbers that are ("S10-S12")."""
    if code.lower() in known.codes:
        return True
    parts = [p for p in code.lower().split("-") if re.search(r"\d", p)]
    return "-" in code and all(p in known.codes and not p.isdigit() for p in parts)


def _is_code(token: str) -> bool:
    return bool(re.search(r"\d", token)) and not _MEASURE.fullmatch(token)


def _dates(text: str) -> Iterator[tuple[tuple[int, int], tuple[int, int]]]:
    """(span, (month, day)) of each date; a range gives both its ends."""
    for pattern in _DATES[:2]:
        for m in pattern.finditer(text):
            groups = [g for g in m.groups() if g]
            month = next(MONTH_OF[g.lower()] for g in groups if g.lower() in MONTH_OF)
            for day in (int(g) for g in groups if g.isdigit()):
                yield m.span(), (month, day)
    for m in _DATES[2].finditer(text):
        yield m.span(), (int(m.group(1)), int(m.group(2)))


def _number_forms(token: str) -> set[str]:
    """What a written number may stand for: "4,275.00" and "4.275" → 4275; "2.5" → 2.5;
    "9.30" → 9.3 or the time 9:30; "09:00" → the time 9:00."""
    forms = set()
    time = re.fullmatch(r"(\d{1,2})[:.](\d{2})((?::\d{2})?)", token)
    if time:
        forms.add(f"{int(time.group(1))}:{time.group(2)}{time.group(3).replace(':00', '')}")
    groups = re.split(r"[.,]", token)
    if ":" in token:
        return forms or {token}
    if len(groups) == 1:
        return {str(int(token))}
    if len(set(re.findall(r"[.,]", token))) == 2:  # the last separator is the decimal one
        return forms | {_decimal("".join(groups[:-1]), groups[-1])}
    if groups[0] != "0" and all(len(g) == 3 for g in groups[1:]):
        return forms | {str(int("".join(groups)))}  # thousands
    return forms | ({_decimal(*groups)} if len(groups) == 2 else {token})


def _decimal(whole: str, fraction: str) -> str:
    if len(fraction) > 2 and not fraction.strip("0"):
        return f"{whole}.{fraction}"  # "68,0000" is no way to write 68
    fraction = fraction.rstrip("0")
    return f"{int(whole)}.{fraction}" if fraction else str(int(whole))


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    for start, end in spans:
        text = text[:start] + " " * (end - start) + text[end:]
    return text


def _word(word: str) -> str:
    return re.sub(r"'s?$", "", word.lower())


def _names(text: str, known: _Known) -> Iterator[tuple[str, bool]]:
    """Each run of capitalised words ("Mei Tanaka"), less function words at its ends ("The",
    "No."). A weekday is held if the sources name that day in any language or abbreviation."""
    for run in _capitalised_runs(text):
        while run and _word(run[0]) in _COMMON:
            run = run[1:]
        while run and _word(run[-1]) in _COMMON:
            run = run[:-1]
        words = [_word(w) for w in run]
        if not words or (len(words) == 1 and words[0] in MONTH_OF):
            continue
        day = _weekday(words[0]) if len(words) == 1 else None
        if day is not None:
            yield run[0], any(_weekday(w) == day for w in known.words)
        else:
            yield " ".join(run), _phrase_held(words, known)


def _weekday(word: str) -> int | None:
    plural = word.endswith("s") and word[:-1] in WEEKDAY_OF  # "on Mondays"
    return WEEKDAY_OF.get(word[:-1] if plural else word)


def _capitalised_runs(text: str) -> Iterator[list[str]]:
    run: list[str] = []
    for token in _RUN_TOKEN.findall(text):
        if token[0].isupper() and token not in _NOT_NAMES and token != "I" and token[:2] != "I'":
            run.append(token)
            continue
        if run:
            yield run
        run = []
    if run:
        yield run


def _phrase_held(words: list[str], known: _Known) -> bool:
    """Every word is in the sources, and the words of a phrase stand near each other there."""
    spots = [[i for i, w in enumerate(known.words) if w == word] for word in words]
    if not all(spots):
        return False
    reach = len(words)  # "Embedded World Nuremberg" for "Embedded World in Nuremberg"
    near = (all(any(0 < abs(q - p) <= reach for q in s) for s in spots[1:]) for p in spots[0])
    return len(words) == 1 or any(near)


def disagreeing_terms(answer: str, evidence: Sequence[str], question: str) -> list[str]:
    """The answer's terms of the kind asked for, when the evidence lines hold terms of that kind
    and the answer holds none of them ("97.2%" against an evidence line reading "98.1%"). A
    presence check passes a wrong figure that stands elsewhere in the sources; this one does not
    when the evidence line found the right one."""
    kinds = asked_kinds(question) - {"place"}
    if not kinds or not evidence:
        return []
    expected = kind_terms(" ".join(evidence), question, kinds)
    given = kind_terms(answer, question, kinds)
    return sorted(given) if expected and given and not expected & given else []


def _claimed(answer: str) -> str:
    """The answer without its sentences that say the answer was not found: they claim nothing."""
    sentences = re.split(r"(?<=[.!?])\s+", answer)
    return " ".join(s for s in sentences if not _REFUSAL.search(s))


def _stems(text: str) -> set[str]:
    words = [w.lower() for w in _CONTENT.findall(text)]
    return set(stems([w for w in words if w not in STOPWORDS and (len(w) > 2 or w.isdigit())]))


# words a sentence about a mail may use that its quote need not hold
_FRAME = frozenset(
    "mail email e-mail message note wrote write writes written said say says sent send sends "
    "told tell mention mentioned mentions according asked ask answer line quote reply replied "
    "forwarded forward".split()
)
_FRAME_STEMS = frozenset(stems(sorted(_FRAME)))


def sentence_faults(
    sentence: str, lines: Sequence[str], question: str
) -> tuple[list[str], list[str]]:
    """(terms, words): what keeps a model sentence from standing on the quoted `lines`. Terms:
    its names, numbers, amounts, dates, times and codes that stand neither in the lines nor in
    the question, and a term of the kind asked for that disagrees with the lines'. Words: its
    content words that do not. Both empty: every checkable term stands in the lines shown."""
    terms = unsupported_terms(sentence, lines, question)
    terms += [t for t in disagreeing_terms(sentence, lines, question) if t not in terms]
    held = _stems(" ".join([*lines, question])) | _FRAME_STEMS
    words = [w for w in _CONTENT.findall(sentence) if w.lower() not in STOPWORDS]
    words = [w for w in words if len(w) > 2 or w.isdigit()]
    missing = [
        w for w, s in zip(words, stems([w.lower() for w in words]), strict=True) if s not in held
    ]
    return terms, [w for w in dict.fromkeys(missing) if w not in terms]


def says_nothing(sentence: str, question: str) -> bool:
    """The sentence says the answer was not found, or holds no content word beyond the
    question's and the frame's ("The answer is:")."""
    if _REFUSAL.search(sentence):
        return True
    said = _stems(_claimed(sentence)) - _stems(question) - _FRAME_STEMS
    return not said
