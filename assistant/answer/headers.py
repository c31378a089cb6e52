"""What mail carries around what it says, line by line: forward banners, reply attributions,
sender stamps and quoted header blocks, and the remains of header blocks laid out in columns or
cut by a chunk. answer/lines.py leaves them out of a chunk's answerable lines."""

from __future__ import annotations

import re

QUOTE = re.compile(r"^\s*(?:>\s?)+")
# "---------------------- Forwarded by Jeff Skilling/Corp/Enron on 02/01/2000" (the sender's
# program may wrap it), "-----Original Message-----", "----- Forwarded message -----", "___"
BANNER = re.compile(
    r"^\s*(?:-{3,}|_{3,}|\*{3,})?\s*(?:forwarded by|original message|forwarded message|"
    r"begin forwarded message)\b",
    re.IGNORECASE,
)
# Lotus Notes' sender stamp of a quoted mail: "Yelba Saettone <y@x.com> on 03/28/2000 01:34 PM"
STAMP = re.compile(
    r"^.{1,120}?\s+(?:on\s+)?\d{1,2}/\d{1,2}/\d{2,4}\s+\d{1,2}:\d{2}(?::\d{2})?\s*[AP]M\s*$",
    re.IGNORECASE,
)
# the same stamp with its sender's name wrapped onto the line above ("Jay Fitzgerald" then
# "05/09/2001 08:55 AM"): a date and a time alone on a line
BARE_STAMP = re.compile(
    r"^\s*\d{1,2}/\d{1,2}/\d{2,4}\s+\d{1,2}:\d{2}(?::\d{2})?\s*[AP]M\s*$", re.IGNORECASE
)
# a reply's attribution of the mail it quotes: "On Tue, 3 Mar 2026 at 10:04, Maya <m@x.me>
# wrote:" (wrapped before "wrote": _ATTRIBUTION_START), "Maya Lindqvist <m@x.me> wrote:",
# "Op 3 mrt. 2026 schreef Maya <m@x.me>:"
_ATTRIBUTION = re.compile(
    r"^\s*(?:(?:on|op|am|den|le|el)\s.{0,200}?|.{0,120}?(?:@|\d{1,2}[:/.]\d{2}).{0,120}?|)"
    r"\b(?:wrote|writes|schreef|schrieb|skrev|a écrit|escribió)(?:\s.{0,120}?)?:\s*$",
    re.IGNORECASE,
)
_ATTRIBUTION_START = re.compile(r"^\s*(?:on|op|am|den|le|el)\s.*(?:\d|@)", re.IGNORECASE)
# what is left of a header block that Lotus Notes laid out in columns or a chunk cut in two:
# a field label inside the line beside an address or a time ("Kevin Hannon 06/11/01 01:22 PM
# To: Steven J Kean/NA/Enron cc: … Subject: Memo"), or a list of addresses
_INNER_FIELD = re.compile(r"\S\s+(?:to|cc|bcc|subject|sent by)\s*:", re.IGNORECASE)
_ADDRESS = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*|\b\w[\w .]*/\w+(?:/[\w ]+)*@\w+")
_TIME = re.compile(r"\d{1,2}/\d{1,2}/\d{2,4}|\d{1,2}:\d{2}\s*[AP]M", re.IGNORECASE)
_RESPOND = re.compile(r"^\s*please respond to\b", re.IGNORECASE)
# a quoted header block: From:/To:/Sent:/cc:/Subject: lines, or Lotus Notes' "From: X on DATE"
QUOTED_FIELD = re.compile(
    r"^\s*(?:from|to|cc|bcc|sent|sent by|date|subject|importance|reply-to|van|aan|onderwerp|"
    r"datum|från|till|ämne)\s*:",
    re.IGNORECASE,
)


def attribution(line: str, after: list[str]) -> int:
    """The lines of a reply's attribution starting at `line` (1, or 2 when it was wrapped
    before "wrote:"), 0 when it is none."""
    if _ATTRIBUTION.match(line):
        return 1
    if after and _ATTRIBUTION_START.match(line):
        nxt = QUOTE.sub("", after[0])
        return 2 if _ATTRIBUTION.match(f"{line.strip()} {nxt.strip()}") else 0
    return 0


def stamp_header(lines: list[str], start: int) -> int:
    """After a sender's stamp, the lines of the quoted mail's header: Lotus Notes writes
    "Please respond to …", "To: …", "cc: …", "Subject: …" (blank ones between)."""
    end = start
    for j in range(start, min(len(lines), start + 8)):
        bare = QUOTE.sub("", lines[j])
        if _RESPOND.match(bare) or QUOTED_FIELD.match(bare) or is_header_debris(bare):
            end = j + 1
        elif bare.strip() and not (end > start and _continues_field(bare)):
            break
    return end - start


def is_header_debris(line: str) -> bool:
    """A header block's remains that no rule above caught: a field label inside the line beside
    an address or a time, or a list of two or more addresses with little else on it."""
    if _INNER_FIELD.search(line) and (_ADDRESS.search(line) or _TIME.search(line)):
        return True
    addresses = _ADDRESS.findall(line)
    rest = _ADDRESS.sub(" ", line)
    return len(addresses) >= 2 and len(re.findall(r"[^\W\d_]{2,}", rest)) <= 4 * len(addresses)


def wrapped_banner(banner: str, after: list[str]) -> int:
    """1 when the banner's dashes went on to the next line ("04:17 PM -------------")."""
    ends = banner.rstrip().endswith(("---", "___", "***"))
    return int(not ends and bool(after) and after[0].rstrip().endswith(("---", "___")))


def sender_lines(lines: list[str], start: int) -> int:
    """After a banner, the lines up to the end of the forwarded mail's header block: Lotus
    Notes writes "Angela Schwarz" / "04/27/2001 04:17 PM" / "To: …" / "Subject: …"."""
    for j in range(start, min(len(lines), start + 5)):
        block = header_block(lines, j)
        if block:
            return j - start + block
    return 0


def header_block(lines: list[str], start: int) -> int:
    """The length of a quoted header block starting at `start` ("From: …", "To: …",
    "cc: …", "Subject: …", blank lines between them allowed), 0 when there is none: it needs
    two fields, one of them From/To/Sent, and ends after its Subject line (or last field)."""
    fields, end, names = 0, start, set()
    for j in range(start, min(len(lines), start + 14)):
        bare = QUOTE.sub("", lines[j])
        match = QUOTED_FIELD.match(bare)
        if match:
            fields += 1
            names.add(match.group().strip(" :").lower())
            end = j + 1
            if names & {"subject", "onderwerp", "ämne"}:
                break
        elif bare.strip() and fields and _continues_field(bare):
            end = j + 1
        elif bare.strip():
            break
    has_sender = bool(names & {"from", "to", "sent", "van", "från"})
    return end - start if fields >= 2 and has_sender else 0


def _continues_field(line: str) -> bool:
    """An address list wrapped onto the next line ("  Rick Buy/HOU/ECT@ECT, …")."""
    return line[:1].isspace() or "@" in line
