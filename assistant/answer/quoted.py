"""A mail's line as a quote shows it: whole when it fits QUOTE_CHARS; else its head (`clipped`,
how the QA bank keys a stored line, whatever the question) or the part that answers the
question (`window`); and the answer span marked in it."""

from __future__ import annotations

import re

from assistant.answer.text import asked_kinds, kind_spans, terms

QUOTE_CHARS = 320  # a line as shown, not a paste of the chunk


def line_key(line: str) -> str:
    """A quoted line as compared across answers: case and spacing aside."""
    return " ".join(line.casefold().split())


def clipped(text: str) -> str:
    """The line's first QUOTE_CHARS, cut at a word, "…" where it was cut."""
    if len(text) <= QUOTE_CHARS:
        return text
    cut = text[: QUOTE_CHARS - 1].rsplit(" ", 1)[0]
    return f"{cut}…"


def window(text: str, question: str) -> str:
    """A long line as shown: the QUOTE_CHARS of it that hold the most of the question's terms
    and of the terms of the kind it asks for (a term of the kind counts as two), the middle one
    of a run of windows that tie (the terms then have context on both sides); "…" marks what
    was left out on either side. A line that fits is shown whole; one that holds no such term,
    from its head."""
    if len(text) <= QUOTE_CHARS:
        return text
    words = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", text)]
    asked = set(terms(question))
    kinds = asked_kinds(question)
    spans = [text.find(s) for s in kind_spans(text, question, kinds)] if kinds else []
    weight = [float(bool(asked & set(terms(w)))) for _, _, w in words]
    for at in spans:
        i = next((k for k, (a, b, _) in enumerate(words) if a <= at < b), None)
        if i is not None:
            weight[i] += 2.0
    room = QUOTE_CHARS - 2  # an ellipsis on either side
    windows, j, total = [], 0, 0.0  # (start, end, weight) for each start word
    for i in range(len(words)):
        while j < len(words) and words[j][1] - words[i][0] <= room:
            total += weight[j]
            j += 1
        windows.append((i, j, total))
        total -= weight[i] if j > i else 0.0
        j = max(j, i + 1)
    best = max(w for _, _, w in windows)
    if best <= 0:
        return clipped(text)
    first = next(k for k, (_, _, w) in enumerate(windows) if w == best)
    last = first
    while last + 1 < len(windows) and windows[last + 1][2] == best:
        last += 1
    start, end, _ = windows[(first + last) // 2]  # the terms in the middle, not at an edge
    if start == 0:
        return clipped(text)
    shown = text[words[start][0] : words[end - 1][1]]
    return f"…{shown}…" if end < len(words) else f"…{shown}"


def answer_span(text: str, question: str) -> str:
    """The part of the quote that answers: the first term of the kind asked for that the
    question does not name ("$1.2 billion", "October 24", "Greg Whalley"); "" when the question
    asks for no particular kind, or the quote holds none."""
    kinds = asked_kinds(question)
    spans = kind_spans(text, question, kinds)
    return spans[0] if spans else ""
