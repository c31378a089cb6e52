"""Bytes → text for any declared (or undeclared, or bogus) charset, counting what was replaced."""

from __future__ import annotations

import codecs

REPLACEMENT = "\ufffd"
FALLBACK = "cp1252"


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
