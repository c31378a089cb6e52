"""The words a question is read with, shared by the QA-bank guard (cache/verify.py), the answer
path's text analysis (assistant/answer/text.py) and follow-up detection: one stopword list, one
light stemmer, the question words and their kinds, months, weekdays, number words and the
contrasting word groups. Pure data and two small functions, no model.
"""

from __future__ import annotations

import unicodedata

NEGATIONS = frozenset(
    "not no never without nobody nothing none neither nor cannot isnt arent wasnt werent dont "
    "doesnt didnt cant couldnt wont wouldnt shouldnt hasnt havent hadnt".split()
)
MONTHS = {
    m[:3]: m
    for m in "january february march april may june july august september october november "
    "december".split()
}
WEEKDAYS = {d[:3]: d for d in "monday tuesday wednesday thursday friday saturday sunday".split()}
RELATIVE_DAYS = frozenset(
    "today tomorrow yesterday tonight weekend morning afternoon evening night spring summer "
    "autumn fall winter".split()
)
NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        "zero _ two three four five six seven eight nine ten eleven twelve".split()
    )
    if w != "_"  # "one" is as often a pronoun ("the Q2 one") as a number
} | {"twenty": "20", "thirty": "30", "forty": "40", "fifty": "50", "hundred": "100"}

# question words: (words, kind); the longest match at a position wins
KIND_PHRASES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("how", "much"), "amount"),
    (("how", "many"), "count"),
    (("how", "long"), "duration"),
    (("how", "often"), "frequency"),
    (("how", "far"), "distance"),
    (("how", "old"), "age"),
    (("what", "time"), "when"),
    (("which", "time"), "when"),
    (("what", "day"), "when"),
    (("which", "day"), "when"),
    (("what", "date"), "when"),
    (("what", "year"), "when"),
    (("which", "year"), "when"),
    (("when",), "when"),
    (("where",), "where"),
    (("who",), "who"),
    (("whom",), "who"),
    (("whose",), "who"),
    (("why",), "why"),
    (("how",), "how"),
)
# nouns that name what a question word asks: "what's the deadline" asks "when"
KIND_NOUNS = {
    "when": frozenset("date day time deadline year month".split()),
    "where": frozenset("place location".split()),
    "amount": frozenset("price cost amount".split()),
    "why": frozenset("reason".split()),
}
AUXILIARIES = frozenset(
    "do does did is are was were am can could should shall will would has have had may might "
    "must".split()
)
STOPWORDS = (
    frozenset(
        """a an the and or but if then than so as of at by for from in into on onto to up down
        out off over under with about after before again also any all each both either every
        few more most other some such only own same too very just still even ever yet already
        what which when where who whom whose why how that this these those there here it its
        i me my mine myself we us our ours you your yours he him his she her hers they them their
        theirs one ones be been being am is are was were do does did done doing has have had
        having can could should shall will would may might must let lets s t d ll m re ve
        please tell know remind exactly actually really again now anyway okay ok hey hi according
        thing things something anything everything stuff kind sort way""".split()
    )
    | AUXILIARIES
    | NEGATIONS
)
# verbs that carry little of what is asked ("what did I get", "what do I give"): a question may
# swap one for another without asking something else
LIGHT_VERBS = frozenset(
    """get gets got getting gotten give gives gave giving given go goes went going gone take
    takes took taking taken put puts putting bring brings brought bringing come comes came
    coming make makes made making want wants need needs""".split()
)
# groups of poles ("pole / pole …"): words of one pole are one word to the guard (start, begin);
# two questions using words of different poles of a group ask different things (the fastest vs
# the slowest, before vs after, per person vs in total). A group of one pole is synonyms only.
CONTRASTS: tuple[tuple[frozenset[str], ...], ...] = tuple(
    tuple(frozenset(pole.split()) for pole in group.split("/"))
    for group in (
        "first / last final / next / previous / original",
        "before / after",
        "start begin beginning commence / end finish",
        "open / close",
        "arrive arrival back / depart departure leave",
        "increase rise / decrease fall drop",
        "more / less fewer",
        "most / least",
        "best better good / worst worse bad",
        "fastest quickest fast quick / slowest slow",
        "highest high / lowest low",
        "biggest largest big large / smallest small",
        "longest long / shortest short",
        "earliest early / latest late",
        "oldest old / newest new / youngest young",
        "cheapest cheap / expensive",
        "lower bottom / upper top",
        "left / right",
        "inside indoor / outside outdoor",
        "include included / exclude excluded",
        "accept accepted approve approved / reject rejected decline declined",
        "win won gain / lose lost",
        "buy bought purchase / sell sold",
        "send sent / receive received",
        "advantages pros / disadvantages cons",
        "positive / negative",
        "strongest strong / weakest weak",
        "hot warm / cold",
        "minimum min / maximum max",
        "total / per each average",
        "outbound / return",
        "import / export",
        "pick picked choose chose chosen select selected",
        "price cost charge fee",
        "problem issue",
        "photo picture",
        "code reference",
        "aim aiming target planned goal expected / actual actually",
    )
)
# longest first; enough to match cost/costs, pick/picked, analysis/analysing, deduct/deductible
_SUFFIXES = (
    "ations ation ations ions ion ysing ysis yses ysed yse ibles ible ables able ments ment "
    "ating ated ates ate ings ing ies ied ers er es ed ly s"
).split()
_IRREGULAR = {"paid": "pay", "made": "make", "sold": "sell", "bought": "buy", "chose": "choose"}


def unaccented(text: str) -> str:
    """`text` with the marks NFKD takes off its letters dropped ('Tomás' → 'Tomas')."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def fold(word: str) -> str:
    """Lower case, accents dropped, a possessive 's dropped."""
    text = unaccented(word.casefold()).replace("’", "'")
    return text[:-2] if text.endswith("'s") else text


def stem(word: str) -> str:
    """A light suffix strip (no dictionary): two forms of one word share their stem."""
    word = _IRREGULAR.get(word, word)
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if len(word) > 3 and word[-1] == word[-2] else word


def stems(words: list[str]) -> list[str]:
    """Each word's stem, in order: a text's words stemmed in one call (the answer path's checks
    stem every word of a sentence and of its lines; a list, not a generator, so that stemming
    does not resume the caller's code word by word)."""
    return [stem(w) for w in words]
