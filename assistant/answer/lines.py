"""A chunk's answerable lines, as mail is written: sentences in prose, a table's rows with their
header, list items whole, hard-wrapped lines joined back; without the chunk's header line,
greetings and sign-offs, signatures, legal disclaimers, attachment stubs, and what mail carries
around what it says (answer/headers.py): forward banners, reply attributions, sender stamps,
quoted header blocks ("-----Original Message-----", "From: … Sent: … To: … Subject: …").

A line below a forward banner, a sender stamp, an attribution or a "> " quote is marked `quoted`:
the evidence picker leaves it out when the mail it quotes is among the candidates itself."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from assistant.answer.headers import (
    BANNER,
    BARE_STAMP,
    QUOTE,
    QUOTED_FIELD,
    STAMP,
    attribution,
    header_block,
    is_header_debris,
    sender_lines,
    stamp_header,
    wrapped_banner,
)
from assistant.llm.decoding import ABBREVIATIONS, BEFORE_NUMBER

_HEADER = re.compile(r"^(From: .*\| Date: .*\| Subject: .*|Note: .*)$")
BULLET = re.compile(r"^\s*(?:[-*•·–]|\d{1,2}[.)]|[a-h][.)])\s+(?:\[[ xX]\]\s*)?")
_HEADING = re.compile(r"^\s*#{1,6}\s+")
_TABLE_RULE = re.compile(r"^\|?(?:\s*:?-{2,}:?\s*\|)+\s*:?-*:?\s*\|?$")
_FIELD = re.compile(r"^[^\W\d_][\w ()/'’-]{0,30}:\s+\S")  # "Room: Quarto Terraço"
# "Booking reference  K7QX4M"; not the two spaces a typist puts after a sentence or a colon,
# nor those of justified or re-wrapped prose, where a lower-case word follows ("the rapid
# deployment of …")
_COLUMNS = re.compile(r"(?<=[^\s.!?:;,])(?: {2,}(?=[^\sa-zß-ÿ])|\t(?=\S))")
_SIGNATURE = re.compile(r"^--\s*$")
_GREETING = re.compile(
    r"^(hi|hello|hey|dear|hej|hoi|beste|morning|good morning|best|regards|kind regards|cheers|"
    r"thanks|thank you|groet|groetjes|met vriendelijke groet|kram|kramar|love)\b",
    re.IGNORECASE,
)
_RULE = re.compile(r"^\s*(?:[-_=*~]\s*){5,}$")
_DISCLAIMER = re.compile(
    r"intended (?:only )?(?:for|recipient|solely)|confidential(?:ity)? (?:notice|information)|"
    r"(?:privileged|confidential) (?:and|or|and/or) (?:confidential|privileged)|"
    r"is the property of|may contain (?:confidential|privileged)|unauthori[sz]ed (?:use|review|"
    r"disclosure|copying)|notify (?:the sender|us) immediately|delete (?:it|this (?:e-?mail|"
    r"message))|this (?:e-?mail|message) (?:and any attachments )?(?:is|are|may be) "
    r"(?:confidential|privileged)|no (?:liability|responsibility) for",
    re.IGNORECASE,
)
# the footer a webmail service or a phone appends to every mail sent through it, with the
# lines of its paragraph (an offer and its link): it says nothing of the mail
_AD = re.compile(
    r"^\s*(?:do you yahoo!?\??\s*$|get your (?:private, )?free\b|get your free download\b|"
    r"send and receive hotmail|express yourself instantly with msn|"
    r"join the world.s largest e-?mail|sent (?:from|via|with) (?:my )?(?:blackberry|iphone|"
    r"ipad|android|mobile|windows phone)\b)",
    re.IGNORECASE,
)
AD_LINES = 3  # an ad's paragraph: the offer, its link
_STUB = re.compile(
    r"^\s*(?:\(embedded image moved to file:.*\)|-\s*\S+\.(?:pcx|gif|jpe?g|png|bmp|doc|xls|ppt|"
    r"pdf|zip|tif)|<<.*>>|\[attachment.*\]|\(see attached file:.*\))\s*$",
    re.IGNORECASE,
)
# a sentence ends at . ! or ? before a capital, a digit or a word with a digit ("v3 is …")
_BOUNDARY = re.compile(r"[.!?]+[\"'”’)\]]*\s+(?=[\"'“‘(\[*]?(?:[^\W_a-z]|[a-z]+\d))")
_NAME_ONLY = re.compile(r"(?:[A-Z][^\W\d_]*\.?\s+){1,2}[A-Z][^\W\d_]+")  # "Jeff Skilling"
WRAPPED = 55  # a mail line this long that stops mid-sentence was wrapped by the sender
ITEM_WORDS = 45  # a list item or table row up to this long stays one evidence line
PAREN = 120  # a parenthesis closing within this many characters holds its full stops
SHORT = 3  # a sentence of this many words or fewer is kept with the next ("Sorry. I …")


@dataclass(frozen=True)
class Line:
    """One answerable unit of a chunk. `context` is the heading above it and the line that
    introduced its list ("Stop criteria:"), which say what a bare "Day 7: 100%" is about;
    `quoted`: it stands in a forwarded or quoted part of the mail."""

    text: str
    context: str = ""
    quoted: bool = False

    @property
    def scored(self) -> str:
        """What the line is scored (and embedded) as: its context, then it."""
        return f"{self.context} {self.text}".strip()


def split_sentences(text: str) -> list[str]:
    """A chunk's lines as text (see `mail_lines`)."""
    return [line.text for line in mail_lines(text)]


def mail_lines(text: str) -> list[Line]:
    """A chunk's answerable lines, in order: the header line, quote markers, bullets, table
    bars, greetings, sign-offs, banners, quoted headers, disclaimers and stubs dropped; wrapped
    lines joined; a list item or table row kept whole; "e.g.", "approx. 5", "9.30",
    "€1.250,00" and "v3.2" unbroken."""
    return list(_lines_in_context(text))


def _lines_in_context(text: str) -> Iterator[Line]:
    heading = lead = ""
    first = text.split("\n", 1)[0]
    title = first[len("Note: ") :].strip().lower() if first.startswith("Note: ") else ""
    blocks = list(_blocks(text))
    for i, (kind, block, quoted) in enumerate(blocks):
        if kind == "heading" or (not lead and _is_title(blocks, i) and i < len(blocks) - 1):
            heading, lead = ("" if block.lower() == title else block), ""
            continue
        # a list item, or a short line that gives what the line before it introduced
        # ("… the Company Code, which is:" / "C673EV"), keeps that line as its context
        lead = lead if kind == "item" or _is_title_line(kind, block) else ""
        sentences = list(_sentences(kind, block))
        if any(_DISCLAIMER.search(s) for s in sentences):
            continue  # a disclaimer's paragraph says nothing about the mail, any of it
        context = f"{heading} {lead}".strip()
        if sentences and sentences[-1].endswith(":"):
            lead = sentences.pop()  # introduces what follows; says nothing by itself
        yield from (Line(s, context, quoted) for s in sentences if s.lower() != title)


def _is_title(blocks: list[tuple[str, str, bool]], i: int) -> bool:
    """A short line standing alone: in a run of such lines ("Total Time 2695" / "Landings
    1500"), each is a line of a list written without bullets, not a heading."""
    kind, block, _ = blocks[i]
    if not _is_title_line(kind, block):
        return False
    return not any(0 <= j < len(blocks) and _is_title_line(*blocks[j][:2]) for j in (i - 1, i + 1))


def _is_title_line(kind: str, block: str) -> bool:
    """A short line without closing punctuation stands as a heading ("Repotting plan")."""
    return kind == "text" and len(block.split()) <= 6 and not block.endswith(tuple(".!?,;:"))


def _blocks(text: str) -> Iterator[tuple[str, str, bool]]:
    """(kind, text, quoted) of each paragraph, list item, table row, heading or field line."""
    block: list[str] = []
    header: list[str] = []
    quoted_block = False
    for line, quoted in _body_lines(text):
        kind = _line_kind(line)
        if kind == "rule":  # the row above it was the table's header
            header = _cells(block[0]) if block and _line_kind(block[0]) == "row" else header
            block = []
            continue
        if block and kind in ("text", "field") and _continues(block[-1], line):
            block.append(line)
            continue
        if block:
            yield (*_join(block, header), quoted_block)
        header = header if kind == "row" else []
        block, quoted_block = ([] if kind == "blank" else [line]), quoted
    if block:
        yield (*_join(block, header), quoted_block)


def _body_lines(text: str) -> Iterator[tuple[str, bool]]:
    """(line, quoted) of the chunk's lines after its header line, without quote markers, up to
    a signature; banners, quoted header blocks, attachment stubs and webmail ads become blank
    lines (they end a paragraph), and what follows a banner counts as quoted."""
    lines = text.split("\n")
    quoted_part = False
    skip = 0
    for i, line in enumerate(lines):
        if skip:
            skip -= 1
            yield "", quoted_part
            continue
        if i == 0 and _HEADER.match(line):
            continue
        marker = QUOTE.match(line)
        if marker is None and _SIGNATURE.match(line):
            return
        bare = line[marker.end() :] if marker else line
        if BANNER.match(bare):
            quoted_part = True
            skip = wrapped_banner(bare, lines[i + 1 : i + 2])
            skip = sender_lines(lines, i + 1 + skip) + skip
            yield "", True
            continue
        if QUOTED_FIELD.match(bare) and header_block(lines, i):
            quoted_part = True
            skip = header_block(lines, i) - 1
            yield "", True
            continue
        said = attribution(bare, lines[i + 1 : i + 2])
        if STAMP.match(bare) or said:
            quoted_part = True  # what follows a sender's stamp is the mail it quotes
            skip = max(said - 1, 0) + stamp_header(lines, i + max(said, 1))
            yield "", True
            continue
        stamp = _wrapped_stamp(bare, lines[i + 1 : i + 2])
        if stamp:  # a stamp's time alone, or its sender's name with the time below it
            header = stamp_header(lines, i + stamp)
            quoted_part, skip = quoted_part or header > 0, stamp - 1 + header
            yield "", quoted_part
            continue
        if is_header_debris(bare):  # with the header fields that follow it
            skip = stamp_header(lines, i + 1)
            yield "", quoted_part
            continue
        if _STUB.match(bare) or _RULE.match(bare):
            yield "", quoted_part
            continue
        if _AD.match(bare):
            skip = next((k for k, x in enumerate(lines[i + 1 : i + 1 + AD_LINES]) if not x.strip()),
                        min(AD_LINES, len(lines) - i - 1))  # fmt: skip
            yield "", quoted_part
            continue
        yield bare.rstrip(), quoted_part or marker is not None


def _wrapped_stamp(line: str, after: list[str]) -> int:
    """The lines of a sender's stamp wrapped before its time ("Jay Fitzgerald@ECT", then
    "05/09/2001 08:55 AM"), or of a time alone on its line: 2, 1, or 0 for none."""
    if BARE_STAMP.match(line):
        return 1
    below = QUOTE.sub("", after[0]) if after else ""
    return 2 if len(line) <= 80 and BARE_STAMP.match(below) else 0


def _line_kind(line: str) -> str:
    stripped = line.strip()
    if not stripped:
        return "blank"
    if _TABLE_RULE.match(stripped):
        return "rule"
    if stripped.startswith("|"):
        return "row"
    if _HEADING.match(line):
        return "heading"
    if BULLET.match(line):
        return "item"
    if _COLUMNS.search(stripped) or (_FIELD.match(stripped) and len(stripped) < WRAPPED):
        return "field"
    return "text"


def _continues(previous: str, line: str) -> bool:
    """Whether `line` goes on with `previous`: indented under it, starting in lower case, or
    after a line the sender's mail program wrapped."""
    kind = _line_kind(previous)
    indented, lower = line[:1].isspace(), line.lstrip()[:1].islower()
    if kind in ("row", "heading", "field"):
        return kind == "field" and indented
    if indented or lower:
        return True
    if _line_kind(line) == "field":
        return False
    if previous.endswith((".", "!", "?")):
        return kind == "text"
    return len(previous) >= WRAPPED


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def _join(block: list[str], header: list[str]) -> tuple[str, str]:
    """One line of text for a block; a table row as "Column: cell; …" when it has a header."""
    kind, first = _line_kind(block[0]), block[0]
    if kind == "row":
        cells = _cells(first)
        if len(header) == len(cells):
            return kind, "; ".join(f"{h}: {c}" for h, c in zip(header, cells, strict=True) if c)
        return kind, " | ".join(c for c in cells if c)
    if kind == "field":
        first = _COLUMNS.sub(" | ", first.strip())
    first = _HEADING.sub("", BULLET.sub("", first))
    joined = " ".join([first, *block[1:]]).replace("**", "").replace("`", "")
    return kind, " ".join(joined.split())


def _sentences(kind: str, block: str) -> Iterator[str]:
    if kind != "text" and len(block.split()) <= ITEM_WORDS:
        yield from _kept(block)
        return
    pending = ""
    for sentence in sentences_of(block):
        pending = f"{pending} {sentence}".strip()
        if len(pending.split()) > SHORT:
            yield from _kept(pending)
            pending = ""
    yield from _kept(pending)


def sentences_of(block: str) -> Iterator[str]:
    """The sentences of `block` (its whitespace as given): a full stop after an abbreviation
    ("Mr.", "Aug.", "a.m.") or an initial, or inside a parenthesis that closes soon after it,
    ends none."""
    start = 0
    for match in _BOUNDARY.finditer(block):
        before, after = block[start : match.start()], block[match.end() :]
        if not _is_abbreviation(before, after) and not _in_parentheses(before, after):
            yield block[start : match.end()].strip()
            start = match.end()
    yield block[start:].strip()


def _in_parentheses(before: str, after: str) -> bool:
    """The boundary stands inside parentheses that close soon after it ("(Harvard Bus.
    Sch. - Entrepreneurship) will be …"): a full stop there ends no sentence."""
    return before.count("(") > before.count(")") and ")" in after[:PAREN]


def _is_abbreviation(before: str, after: str) -> bool:
    words = before.split()
    if not words:
        return True
    word = words[-1].lstrip("(\"'“").rstrip(".").lower()
    if len(word) == 1 and word.isalpha():
        return True  # an initial: "H. Mulder"
    return word in ABBREVIATIONS or (word in BEFORE_NUMBER and after[:1].isdigit())


def _kept(sentence: str) -> Iterator[str]:
    """The sentence, unless it is only a greeting, a sign-off, a name or a lone number."""
    words = re.findall(r"[^\W\d_]{2,}", sentence)
    if len(words) < 2 and not (words and re.search(r"\d", sentence)):
        return
    if _NAME_ONLY.fullmatch(sentence.strip()):
        return
    if len(sentence.split()) > 4 or not _GREETING.match(sentence):
        yield sentence
