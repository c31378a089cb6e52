"""Bytes → text for any declared (or undeclared, or bogus) charset, counting what was replaced."""

from __future__ import annotations

import codecs
import re

REPLACEMENT = "\ufffd"
FALLBACK = "cp1252"
_HEADER_END = re.compile(rb"\r?\n\r?\n")


def decode_bytes(data: bytes, charset: str | None) -> tuple[str, int, str | None]:
    """Decode `data`; return (text, replaced_count, warning).

    A declared charset is trusted; an unknown one, or none, falls back to UTF-8 if the bytes are
    valid UTF-8, else to Windows-1252 (the usual mislabelled Latin-1) with replacement.
    """
    warning = None
    if charset:
        try:
            codec = codecs.lookup(_alias(charset)).name
        except LookupError:
            codec, warning = None, f"unknown charset {charset!r}; decoded as UTF-8/Windows-1252"
        if codec == "ascii":
            codec = None  # 8-bit bytes under a us-ascii label are nearly always UTF-8
        if codec:
            text = data.decode(codec, errors="replace")
            return text, _replaced(text, data), warning
    try:
        return data.decode("utf-8"), 0, warning
    except UnicodeDecodeError:
        text = data.decode(FALLBACK, errors="replace")
        return text, _replaced(text, data), warning


def _alias(charset: str) -> str:
    cs = charset.strip().strip('"').lower()
    return {"unknown-8bit": "cp1252", "x-unknown": "cp1252", "ansi_x3.4-1968": "ascii"}.get(cs, cs)


def _replaced(text: str, data: bytes) -> int:
    # U+FFFD present as valid UTF-8 in the source is not a replacement.
    return max(0, text.count(REPLACEMENT) - data.count(b"\xef\xbf\xbd"))


def utf8_headers(raw: bytes) -> bytes:
    """`raw` with each header line in raw 8-bit bytes that are not UTF-8 read as Windows-1252 and
    re-encoded as UTF-8. The parser keeps raw UTF-8 in headers but turns every other 8-bit byte
    into U+FFFD; a mailer that wrote them unencoded almost always wrote Latin-1."""
    end = _HEADER_END.search(raw)
    cut = end.start() if end else len(raw)
    if raw[:cut].isascii():
        return raw
    return b"\n".join(_as_utf8(line) for line in raw[:cut].split(b"\n")) + raw[cut:]


def _as_utf8(line: bytes) -> bytes:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return line.decode(FALLBACK, errors="replace").encode("utf-8")
    return line
