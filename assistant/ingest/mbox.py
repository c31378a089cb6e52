"""mbox files, streamed message by message with byte offsets.

A message starts at a From_ line that parses as an envelope — `From <sender> <asctime date>`,
as mutt and notmuch read it, or `From <sender> <RFC 2822 date>` as some exporters write it —
whether or not a blank line comes before it; a body line that starts with `From ` but is no
envelope stays in the body. A UTF-8 byte order mark and blank lines before the first From_ line are
passed over (offsets stay those of the file's bytes). A 20 MB attachment costs only its own message,
and a truncated file still yields every message before the cut. A file whose first From_ line was
lost (it starts with the first message's headers) is still an mbox:
that message is read from offset 0, with a warning."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, NamedTuple

from assistant.ingest.bounds import DEFAULT_MAX_PART_BYTES
from assistant.ingest.emails import read_message
from assistant.ingest.types import Document, Issue

# Headers a mail (or an mbox that lost its first From_ line) starts with.
_FIRST_HEADER = re.compile(
    rb"(?i)(return-path|received|delivered-to|envelope-to|x-original-to|x-mozilla-status|from|to"
    rb"|cc|date|subject|message-id|mime-version|reply-to|sender):"
)

_DAY = rb"(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*,?"
_MONTH = rb"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*"
_TIME = rb"\d{1,2}:\d\d(?::\d\d)?"
# `From sender Thu Jan  1 00:00:00 2026`, the sender optional (mutt allows it), a zone before or
# after the year (`+0000` in Gmail's exports, `MET DST` in old ones)
_ENVELOPE = re.compile(
    rb"(?i)From (?:\S.*?\s+)?"
    + _DAY
    + rb"\s+"
    + _MONTH
    + rb"\s+\d{1,2},?\s+"
    + _TIME
    + rb"(?:\s+[a-z]{1,5}|\s+[+-]\d{4})*\s+\d{4}(?:\s|$)"
)
# `From sender Mon, 3 Jan 2005 10:00:00 +0000`: one sender token, and nothing after the date but
# a zone (`+0000`, `GMT`, `(UTC)`), so that prose such as `From Amsterdam 3 Jan 2005 09:00:00 we
# fly` stays body
_RFC_ENVELOPE = re.compile(
    rb"(?i)From \S+\s+(?:"
    + _DAY
    + rb"\s*)?\d{1,2}\s+"
    + _MONTH
    + rb"\s+\d{4}\s+\d{1,2}:\d\d:\d\d(?:\s+[+-]\d{4}|\s+(?-i:[A-Z]{1,5}))*(?:\s+\([^()]*\))?\s*$"
)
_BOM = b"\xef\xbb\xbf"  # UTF-8 byte order mark some Windows tools write first
_ENVELOPE_MAX = 512  # longer From_ lines are cut before matching: no backtracking on a huge line
_ESCAPED_FROM = re.compile(rb">+From ")


def is_envelope(line: bytes) -> bool:
    """A From_ line that starts a message (not a body line that happens to start with From)."""
    if line.startswith(_BOM):
        line = line[len(_BOM) :]
    if not line.startswith(b"From "):
        return False
    head = line[:_ENVELOPE_MAX]
    return _ENVELOPE.match(head) is not None or _RFC_ENVELOPE.match(head) is not None


class _Piece(NamedTuple):
    offset: int  # of its From_ line (0 for text before the first one)
    raw: bytearray
    complete: bool  # ended before the next From_ line, not at the end of the file
    separated: bool  # had a From_ line


def looks_like_mbox(path: Path) -> bool:
    """The file starts with a From_ line."""
    return is_envelope(_first_line(path))


def starts_with_headers(path: Path) -> bool:
    """The file starts with a mail header: one message saved alone, or an mbox whose first From_
    line was lost."""
    return bool(_FIRST_HEADER.match(_first_line(path)))


def _first_line(path: Path) -> bytes:
    """The first line that is not blank (within the first 64 KiB), without a byte order mark."""
    try:
        with path.open("rb") as fh:
            line = fh.readline(1000).removeprefix(_BOM)
            while line and line.isspace() and fh.tell() < 65536:
                line = fh.readline(1000)
            return line
    except OSError:
        return b""


def count_mbox(path: Path, start: int = 0) -> int:
    """How many messages `read_mbox` yields from `start` (an item each, valid or not)."""
    count, leading = 0, False
    with path.open("rb") as fh:
        fh.seek(start)
        for line in iter(fh.readline, b""):
            if is_envelope(line):
                count += 1
            elif not count and line.strip() not in (b"", _BOM):
                leading = True
    return count + leading


def read_mbox(
    path: Path, max_part_bytes: int = DEFAULT_MAX_PART_BYTES, start: int = 0
) -> Iterator[Document | Issue]:
    """Each message of the mbox from byte `start` on (where an earlier read ended: appended mail
    begins there)."""
    folder = path.stem
    with path.open("rb") as fh:
        fh.seek(start)
        for piece in _split(fh, start):
            where = f"offset {piece.offset}"
            item = read_message(piece.raw, str(path), where, piece.offset, folder, max_part_bytes)
            if isinstance(item, Document):
                if not piece.complete:
                    item.warnings.append("the file ends inside this message (truncated?)")
                if not piece.separated:
                    item.warnings.append(
                        "no 'From ' line before this message (the start of the file is lost?); "
                        "read from offset 0"
                    )
            yield item


def _split(fh: BinaryIO, offset: int = 0) -> Iterator[_Piece]:
    """Yield each message: the text after each From_ line, and the text before the first one
    unless it is blank. `offset`: where in the file `fh` stands. A message grows in one buffer,
    unescaped line by line (mboxrd: '>From ', '>>From '… at the start of a body line were escaped
    on write; one level is undone): a list of its lines would cost a large attachment its size
    again in line objects."""
    start, raw, separated = offset, bytearray(), False
    for line in iter(fh.readline, b""):
        size = len(line)
        if not offset:  # a file saved with a byte order mark: not part of its first header
            line = line.removeprefix(_BOM)
        if is_envelope(line):
            if separated or _has_text(raw):
                yield _Piece(start, raw, True, separated)
            start, raw, separated = offset, bytearray(), True
        else:
            raw += line[1:] if _ESCAPED_FROM.match(line) else line
        offset += size
    if separated or _has_text(raw):
        yield _Piece(start, raw, raw.endswith(b"\n"), separated)


def _has_text(raw: bytearray) -> bool:
    return bool(raw) and not raw.isspace()
