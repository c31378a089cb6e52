"""Split a mail body into its own text and the rest (quoted reply tails, signature)."""

from __future__ import annotations

import re

_ATTRIBUTION = re.compile(
    r"^(on .{4,200}(wrote|schrieb|skrev|schreef|a écrit)\s*:\s*$"
    r"|-{2,}\s*original message\s*-{2,}"
    r"|_{8,}\s*$)",
    re.IGNORECASE,
)
_OUTLOOK_HEADER = re.compile(r"^(from|van|från):\s.+", re.IGNORECASE)
_SIGNATURE = re.compile(r"^--\s?$")


def split_reply(text: str) -> tuple[str, str]:
    """Return (own_text, rest).

    Quoted lines ("> …") and their attribution line go to `rest`, as does everything after a
    signature separator ("-- ") or a forwarded/original-message marker. Inline replies between
    quoted blocks stay in the own text.
    """
    own: list[str] = []
    rest: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        stripped = line.strip()
        if _SIGNATURE.match(line) or _starts_tail(stripped, lines, i):
            rest.extend(lines[i:])
            break
        if stripped.startswith(">") or _is_attribution_before_quote(stripped, lines, i):
            rest.append(line)
        else:
            own.append(line)
    return _tidy("\n".join(own)), _tidy("\n".join(rest))


def _starts_tail(stripped: str, lines: list[str], i: int) -> bool:
    low = stripped.lower()
    if "original message" in low and low.startswith("-"):
        return True
    if re.match(r"^_{8,}$", stripped) and i + 1 < len(lines):
        return bool(_OUTLOOK_HEADER.match(lines[i + 1].strip()))
    return False


def _is_attribution_before_quote(stripped: str, lines: list[str], i: int) -> bool:
    if not _ATTRIBUTION.match(stripped):
        return False
    following = [ln.strip() for ln in lines[i + 1 : i + 4] if ln.strip()]
    return bool(following) and following[0].startswith(">")


def _tidy(text: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", text).strip()
