"""People's names from address headers, so `from:skilling` and "from Sherri" find a mail whose
From holds only an address: the display names of From/To/Cc, and where a header has none, those
of the X-From/X-To/X-cc headers that Lotus Notes and Exchange exports (the Enron corpus) carry."""

from __future__ import annotations

import re
from email.utils import getaddresses
from functools import lru_cache

# what Exchange/Notes exports wrap a name in: `<IMCEANOTES-…>`, `</O=ENRON/OU=NA/…>`, `@ENRON`
_EXPORT_NOISE = re.compile(r"<IMCEA[^>]*>|</?O=[^>]*>|@ENRON\b", re.IGNORECASE)


def header_names(value: str) -> list[str]:
    """The display names of an address header ('Last, First' turned around), in order."""
    return [_first_last(name) for name, _ in getaddresses([value]) if name.strip()]


def export_names(value: str) -> list[str]:
    """The names of an X-From/X-To/X-cc header: quoted or bare, 'Last, First' turned around;
    bare addresses are left out (the address header has them)."""
    text = _EXPORT_NOISE.sub(" ", value).strip()
    if not text:
        return []
    if "<" not in text and '"' not in text:
        if "@" not in text and text.count(",") == 1 and not _two_names(text):
            return [_first_last(text)]
        return [p.strip() for p in text.split(",") if p.strip() and "@" not in p]
    out = []
    for name, addr in getaddresses([text]):
        name = name or ("" if "@" in addr else addr)
        if name.strip():
            out.append(_first_last(name))
    return out


@lru_cache(maxsize=1024)  # one list of people heads many mails: parsed once
def names(header: str, export: str = "") -> str:
    """The names for a header, '; '-joined: its own display names, else the export header's."""
    found = header_names(header) or export_names(export)
    return "; ".join(dict.fromkeys(n for n in found if n))


def _two_names(text: str) -> bool:
    """'Federico Cerisoli, David Crews' (a list) rather than 'Kaminski, Vince J' (one name)."""
    return all(len(side.split()) > 1 for side in text.split(","))


def _first_last(name: str) -> str:
    name = " ".join(name.replace('"', " ").split())
    if name.count(",") == 1:
        last, first = (p.strip() for p in name.split(","))
        if first and last and not first.lower().startswith(("jr", "sr", "inc", "ltd", "llc")):
            return f"{first} {last}"
    return name
