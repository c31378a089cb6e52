"""What one attached file may cost (`Limits`): shared by the file's reader
(attachment_formats.py) and the code that calls it (attachments.py), which imports the readers."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """What one attached file may cost. An Office file's XML is held whole as a tree by its
    library, several times its size in memory: `max_unzipped` bounds it. A zip member counts as a
    bomb when it inflates more than `max_ratio` times and to more than `ratio_floor` bytes:
    small, repetitive XML compresses that well too, and is harmless. A calendar or an HTML file
    is parsed whole before its first block can be checked against the time limit, seconds a few
    megabytes: `max_whole_bytes` (an invitation or a page is far smaller; an exported calendar
    is not what a question is answered from)."""

    max_bytes: int = 25_000_000
    max_pages: int = 50
    max_chars: int = 200_000
    max_seconds: float = 15.0
    max_whole_bytes: int = 2_000_000
    max_unzipped: int = 50_000_000
    max_members: int = 10_000
    max_ratio: float = 100.0
    ratio_floor: int = 1_000_000


DEFAULT_LIMITS = Limits()
