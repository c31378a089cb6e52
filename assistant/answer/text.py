"""The answer path's one text analysis: its tokenizer, stemmer and stopword list (the stemmer and
stopwords are cache/verify's, the QA bank's guard, so that a stored question and the lines that
answer it are read alike), and what a question asks for (a date, a figure, a code, a name, a
place) with the terms of that kind a line holds: the line scorer favours lines that hold the kind
asked for, and the support check asks a sentence to hold it and to agree with its quote on it."""

from __future__ import annotations

import re

from cache.words import STOPWORDS, stem, stems

__all__ = [
    "STOPWORDS",
    "stem",
    "stems",
    "words",
    "terms",
    "asked_kinds",
    "answer_kinds",
    "kind_terms",
    "asked_cues",
    "holds_cue",
]

_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """The text's words, lower case (the tokenizer every answer module uses)."""
    return _WORD.findall(text.lower())


def terms(text: str) -> list[str]:
    """The text's content words, stemmed: what BM25 over lines and the word checks compare."""
    return stems([w for w in words(text) if w not in STOPWORDS])


_ASKS = (
    (
        "date",
        r"\b(when|what (date|day|time|year)|which (days?|date|evenings?|month|week|year)|"
        r"by when|how soon|deadlines?|due date|(?:start|end|closing|expiry|expiration|"
        r"cut-?off) date)\b",
    ),
    (
        "number",
        r"\b(how (much|many|long|far|fast|big|hot|warm|old|often|large|high|strongly)|"
        r"what (price|cost|score|rate|pace|percentage|share|yield|current|amount|fee|salary|"
        r"budget|size|temperature|number|value|total|time))\b",
    ),
    (
        "number",
        r"\b(cost|costs|costing|price|pay|paid|charges?|spend|spent|fees?|budget|"
        r"salary|refund)\b",
    ),
    (
        "code",
        r"\b(code|reference|booking number|confirmation number|ticket|model|ip address|"
        r"version)\b",
    ),
    ("name", r"\b(who|whom|whose)\b"),
    (
        "name",
        r"\bwhat(?:'s|’s| is| was| are| were) (?:the |its |his |her |their |our |my )?"
        r"(?:[\w'’]+ )?(?:name|title)s?\b",
    ),
    ("place", r"\bwhere\b"),
)
_ASK_PATTERNS = tuple((kind, re.compile(pattern, re.IGNORECASE)) for kind, pattern in _ASKS)
# month and weekday names as mail writes them (English, Dutch, Swedish), with their number
_MONTH_NAMES = (
    "january jan januari",
    "february feb februari",
    "march mar maart mars",
    "april apr",
    "may mei maj",
    "june jun juni",
    "july jul juli",
    "august aug augustus augusti",
    "september sep sept",
    "october oct oktober okt",
    "november nov",
    "december dec",
)
MONTH_OF = {name: n for n, names in enumerate(_MONTH_NAMES, 1) for name in names.split()}
_WEEKDAY_NAMES = (
    "monday mon maandag måndag",
    "tuesday tue tues dinsdag tisdag",
    "wednesday wed woensdag onsdag",
    "thursday thu thur thurs donderdag torsdag",
    "friday fri vrijdag fredag",
    "saturday sat zaterdag lördag",
    "sunday sun zondag söndag",
)
WEEKDAY_OF = {name: n for n, names in enumerate(_WEEKDAY_NAMES) for name in names.split()}
_DAYS = [
    *WEEKDAY_OF,
    *"today tomorrow tonight yesterday weekend morning afternoon evening".split(),
]
_DATE_WORD = re.compile(
    rf"\b(?:{'|'.join([*MONTH_OF, *_DAYS])})\b|\b\d{{1,2}}[:.]\d{{2}}\b|\b(?:19|20)\d{{2}}\b",
    re.IGNORECASE,
)
_FIGURE = re.compile(r"\d+(?:[.,:]\d+)*")
_NAME = re.compile(r"(?<![.!?:]\s)(?<!^)\b[A-Z][^\W\d_]+")
# a place: "at the Hyatt", "in Houston"; a street address ("509 Main Street", "3402 Washington
# Ave."); a web address ("www.rei.com"); a field that says where ("Location: …", "PLACE - …")
_STREET = r"(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Drive|Dr|Lane|Ln|Parkway|Pkwy|Hwy)"
_PLACE = re.compile(
    r"\b(?:at|in|on|from|near|to|via)\s+(?:the\s+)?[A-Z][^\W\d_]+"
    rf"|\b\d{{1,5}}\s+(?:[A-Z][^\W\d_]*\.?\s+){{1,3}}{_STREET}\b\.?"
    r"|(?:\bhttps?://|\bwww\.)[\w-]+(?:\.[\w-]+)+"
    r"|\b(?i:place|where|location|venue|address)\s*[:–-]\s+[A-Z0-9#][^\W_]*"
)
_ID = re.compile(r"\b(?=[A-Z0-9-]*[0-9])(?=[A-Z0-9-]*[A-Z])[A-Z0-9][A-Z0-9.-]{3,}\b")


def asked_kinds(question: str) -> set[str]:
    """What the question asks for: "date", "number", "code", "name" and/or "place"."""
    return {kind for kind, pattern in _ASK_PATTERNS if pattern.search(question)}


# the form a "number" or "date" question asks its answer in: an amount of money ("how much does
# it cost", "what was the price"), a time of day ("what time", "at what time")
_FORM_ASKS = (
    ("money", re.compile(
        r"\b(?:price[sd]?|costs?|costing|pa(?:y|id|ying)|charg(?:e[sd]?|ing)|fees?|salary|"
        r"rais(?:e|ed|es|ing)|spen[dt]|spending|worth|money|dollars?|budget)\b", re.IGNORECASE)),
    ("clock", re.compile(r"\b(?:what time|at what time|how early|how late)\b", re.IGNORECASE)),
)  # fmt: skip
_SUM_ASKED = re.compile(
    r"\b(?:how much|what(?:'s|’s| is| was| are| were)? (?:the |its |his |her |their )?(?:\w+ )?"
    r"(?:price|cost|fee|salary|amount|budget|sum|total|rate)|"
    r"what (?:would|will|does|did|do) (?:it|that|this|they|we|i) (?:cost|charge|pay))\b",
    re.IGNORECASE,
)
_CLOCK = re.compile(
    r"\b\d{1,2}(?:[:.]\d{2})?\s?(?:a\.?m\.?|p\.?m\.?|h\b|uur\b|o.clock\b)|\b\d{1,2}[:.]\d{2}\b|"
    r"\b(?:noon|midday|midnight|morning|afternoon|evening|tonight|half past|quarter (?:past|to))\b",
    re.IGNORECASE,
)


def asked_forms(question: str) -> set[str]:
    """The form a figure or a date must have to answer: "money" for a "how much" or "what
    price" question about a cost, a payment or a sum raised, "clock" for "what time"."""
    kinds = asked_kinds(question)
    if "number" not in kinds and "date" not in kinds:
        return set()
    # a sum is asked for by "how much" or "what price …", not by "who paid" or "how many"
    summing = _SUM_ASKED.search(question) and not re.search(r"\bhow many\b", question, re.I)
    return {
        form for form, pattern in _FORM_ASKS
        if pattern.search(question) and (form != "money" or summing)
    }  # fmt: skip


def form_spans(text: str, question: str, form: str) -> list[str]:
    """The terms of that form in `text` that the question does not name."""
    asked = question.lower()
    pattern = _SUM if form == "money" else _CLOCK
    spans = (m.group().strip(" .,") for m in pattern.finditer(text))
    return [span for span in spans if span and span.lower() not in asked]


def answer_kinds(sentence: str, question: str) -> set[str]:
    """The kinds of answer the sentence holds that the question does not already name."""
    asked = question.lower()
    found = {
        "date": any(m.lower() not in asked for m in _DATE_WORD.findall(sentence)),
        "number": any(m not in asked for m in _FIGURE.findall(sentence)),
        "code": any(m.lower() not in asked for m in _ID.findall(sentence)),
        "name": any(_is_new_name(m, asked) for m in _NAME.findall(sentence)),
        "place": any(_is_new_place(m, asked) for m in _PLACE.findall(sentence)),
    }
    return {kind for kind, held in found.items() if held}


# What a "why" or a yes/no question about a decision is answered by, as mail writes it: a cause
# ("because", "due to", "so I'll …"), not being able or free ("unable", "out of the office",
# "a prior commitment"), or the decision itself ("decline", "not interested", "happy to").
# They only favour a line in the scorer (answer/evidence.py's "kind" column): unlike a date or a
# figure, a reason can be written without any of these words, so no quote is refused for
# lacking one (lacks_kind reads asked_kinds alone).
_CUE_ASKS = (
    ("reason", re.compile(r"^\W*why\b|\bwhy (?:did|do|does|is|was|were|are|has|have|would|"
                          r"should|could|can|didn|won|not)\b|\bwhat (?:is|was) the reason\b|"
                          r"\bhow come\b", re.IGNORECASE)),
    ("decision", re.compile(r"^\W*(?:did|do|does|has|have|had|will|would|is|was|are|were)\b.*"
                            r"\b(?:accept\w*|declin\w*|agree\w*|approv\w*|decid\w*|go ahead|"
                            r"attend\w*|sign\w*|join\w*|invest\w*|turn\w* down|participat\w*|"
                            r"commit\w*|end up|ended up)\b", re.IGNORECASE)),
)  # fmt: skip
_REASON = re.compile(
    r"\b(?:because|since|due to|owing to|given (?:that|the|his|her|their|our|my)|so (?:that|"
    r"I|I'll|I'm|we|we'll|he|she|they|it)|unable|cannot|can't|can not|won't|couldn't|"
    r"unfortunately|conflicts?|conflicting|already committed|prior commitment|previous "
    r"commitment|out of (?:the )?(?:office|country|town)|travel(?:l)?ing|on vacation|not (?:a|an|"
    r"able|available|interested|possible|enough))\b",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(?:declin\w*|accept\w*|agreed|approved?|regrets?|regretfully|unable|not interested|"
    r"(?:happy|pleased|delighted|glad) to|will (?:not )?(?:attend|participate|join)|"
    r"turn(?:ed|ing)? down|pass on|unfortunately|cannot|can't|won't)\b",
    re.IGNORECASE,
)
_CUES = {"reason": _REASON, "decision": _DECISION}


def asked_cues(question: str) -> set[str]:
    """The cue "reason" for a why-question, "decision" for a yes/no question about one ("did I
    accept …", "did we decide to go ahead …")."""
    return {cue for cue, pattern in _CUE_ASKS if pattern.search(question)}


def holds_cue(line: str, question: str, cues: set[str]) -> bool:
    """The line holds a word of a cue asked that the question does not use itself ("why did I
    decline" is not answered by the line that says "decline")."""
    asked = set(words(question))
    return any(
        not set(words(m.group())) <= asked for cue in cues for m in _CUES[cue].finditer(line)
    )


def _is_new_place(match: str, asked: str) -> bool:
    """A new place ("at Rye", "in Houston"): not a place the question names, nor a date ("on June
    12")."""
    word = match.split()[-1]
    return word.lower() not in asked and not _DATE_WORD.fullmatch(word)


def _is_new_name(word: str, asked: str) -> bool:
    low = word.lower()
    return low not in asked and low not in STOPWORDS and not _DATE_WORD.fullmatch(word)


def kind_terms(text: str, question: str, kinds: set[str]) -> set[str]:
    """The terms of `kinds` in `text` that the question does not name, normalised so that two
    writings of one term meet ("1,846.00" and "1846", "June" and "jun")."""
    asked = question.lower()
    terms: set[str] = set()
    if kinds & {"number", "date"}:
        terms |= {_figure(m) for m in _FIGURE.findall(text) if m not in question}
        words = (m.lower() for m in _DATE_WORD.findall(text) if not m[0].isdigit())
        terms |= {w[:3] for w in words if w not in asked}
    if "code" in kinds:
        terms |= {m.lower() for m in _ID.findall(text) if m.lower() not in asked}
    if "name" in kinds:
        terms |= {m.lower() for m in _NAME.findall(text) if _is_new_name(m, asked)}
    return terms


def _figure(text: str) -> str:
    bare = text.replace(",", "")
    return bare.rstrip("0").rstrip(".") if "." in bare else bare


_MONEY = re.compile(
    r"(?:[$€£]|\b(?:USD|EUR|GBP)\s?)\s?\d[\d,.]*(?:\s?(?:million|billion|thousand|mm|bn|[mkb])\b)?"
    r"|\b\d[\d,.]*\s?(?:million|billion|thousand|percent|cents?|dollars?|%)(?!\w)",
    re.IGNORECASE,
)
# an amount: with its currency or scale, or a figure written with thousands separators or cents
# ("61,000", "1.250,00", "49.95")
_WRITTEN_SUM = r"\b\d{1,3}(?:[,.]\d{3})+(?:[.,]\d{2})?\b|\b\d+[.,]\d{2}\b"
_SUM = re.compile(f"{_MONEY.pattern}|{_WRITTEN_SUM}", re.IGNORECASE)
_MONTHS_RE = "|".join(sorted(MONTH_OF, key=len, reverse=True))
_FULL_DATE = re.compile(
    rf"\b(?:{_MONTHS_RE})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS_RE})\b\.?(?:,?\s+\d{{4}})?"
    r"|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b|\b\d{4}-\d{2}-\d{2}\b"
    r"|\b\d{1,2}(?::\d{2})?\s?(?:a\.?m\.?|p\.?m\.?)(?!\w)|\b\d{1,2}:\d{2}\b",
    re.IGNORECASE,
)
_NAME_RUN = re.compile(r"\b[A-Z][^\W\d_]+(?:\s+(?:[A-Z]\.\s+)?[A-Z][^\W\d_]+)+")
_YEAR = re.compile(r"^(?:19|20)\d{2}$")


def kind_spans(text: str, question: str, kinds: set[str], strict: bool = False) -> list[str]:
    """The terms of `kinds` in `text` that the question does not name, as the text writes
    them, the most telling first: amounts before bare figures, whole dates before weekdays,
    full names before single capitalised words. `strict`: whole dates and full names only."""
    asked = question.lower()
    found: list[tuple[int, int, str]] = []  # (priority, position, span)

    def add(priority: int, pattern: re.Pattern, keep=lambda s: True) -> None:
        for m in pattern.finditer(text):
            span = m.group().strip(" .,")
            if span and span.lower() not in asked and keep(span):
                found.append((priority, m.start(), span))

    if "number" in kinds:
        add(0, _MONEY)
        add(2, _FIGURE, lambda s: not _YEAR.match(s))
    if "date" in kinds:
        add(0, _FULL_DATE)
        if not strict:
            add(2, _DATE_WORD)
    if "name" in kinds:
        add(0, _NAME_RUN, lambda s: s.split()[0].lower() not in STOPWORDS)
        if not strict:
            add(3, _NAME, lambda s: _is_new_name(s, asked))
    if "code" in kinds:
        add(1, _ID)
    if "place" in kinds:
        add(1, _PLACE, lambda s: _is_new_place(s, asked))
    found.sort(key=lambda t: (t[0], t[1]))
    return list(dict.fromkeys(span for _, _, span in found))
