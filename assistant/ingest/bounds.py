"""What one text part may put into the knowledge bank: a part over the size cap is cut, a part that
is binary is not indexed, and runs of base64-like lines inside text are left out (an attachment
pasted or mis-declared as text would otherwise become thousands of chunks of noise)."""

from __future__ import annotations

import re

DEFAULT_MAX_PART_BYTES = 1_000_000

# A line of base64 (or hex, or a PGP armour line): 40+ characters of its alphabet, no spaces; a
# run of them may end with a shorter line (the remainder).
_ENCODED_LINE = r"[ \t]*[A-Za-z0-9+/_-]{{{n},}}={{0,2}}[ \t]*(?:\r?\n|$)"
_ENCODED_RUN = re.compile(
    rf"(?m)^(?:{_ENCODED_LINE.format(n=40)})+(?:{_ENCODED_LINE.format(n=1)})?"
)
_MIN_RUN_CHARS = 200  # a run shorter than this (one hash, one key) stays: it may be searched for
# Control characters other than tab, newlines, form feed and escape (ISO-2022-JP switches with
# it): text in any 8-bit charset has none, random bytes about one in ten, whatever the charset
# they are decoded with. Undecodable bytes (U+FFFD) are not counted: mislabelled text has many.
_BINARY_CHAR = re.compile(r"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f\x7f]")
_BINARY_SHARE = 0.02
_BINARY_MIN = 8
_SAMPLE = 65_536


def cut_part(payload: bytes, max_bytes: int) -> tuple[bytes, str | None]:
    """`payload` cut to `max_bytes` (at a line end when there is one near), with a warning."""
    if len(payload) <= max_bytes:
        return payload, None
    cut = payload.rfind(b"\n", max(0, max_bytes - 4096), max_bytes)
    kept = payload[: cut + 1 if cut >= 0 else max_bytes]
    warning = (
        f"text part of {len(payload) / 1e6:.1f} MB cut to its first {len(kept) / 1e6:.1f} MB "
        "(chunking.max_part_mb)"
    )
    return kept, warning


def looks_binary(text: str) -> bool:
    """More than 2% of a sample of `text` (and at least 8 characters) is control characters."""
    sample = text[:_SAMPLE]
    found = len(_BINARY_CHAR.findall(sample))
    return found >= _BINARY_MIN and found > _BINARY_SHARE * len(sample)


def drop_encoded_runs(text: str) -> tuple[str, int]:
    """`text` without its runs of base64-like lines; how many characters were left out."""
    dropped = 0

    def drop(match: re.Match[str]) -> str:
        nonlocal dropped
        if len(match.group(0)) < _MIN_RUN_CHARS:
            return match.group(0)
        dropped += len(match.group(0))
        return ""

    return _ENCODED_RUN.sub(drop, text), dropped


def bound_text(text: str) -> tuple[str, list[str]]:
    """The part of `text` worth indexing, and a warning for each thing left out."""
    if looks_binary(text):
        return "", [f"a text part of {len(text):,} characters is binary data; not indexed"]
    kept, dropped = drop_encoded_runs(text)
    if not dropped:
        return text, []
    return kept.strip(), [f"{dropped:,} characters of base64-like text left out of the index"]
