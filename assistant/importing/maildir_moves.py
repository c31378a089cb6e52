"""Where a mail that vanished from a Maildir an import read is now: in another remembered Maildir
that this import did not read (a mail client moved it from INBOX to an Archive imported as a path
of its own), found by its file's unique name, not by reading the other Maildir again.

A Maildir file keeps its unique name when it moves between folders or its flags change: only its
info (':2,S') and the fields some clients append (',S=size', ',U=uid') change. The folders' file
names are listed, no mail is parsed; a file whose unique name matches is taken only when its
headers carry the stored mail's Message-ID. A folder that cannot be listed keeps every vanished
Maildir mail this time (what cannot be checked is not removed); a remembered Maildir since deleted
holds nothing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from assistant.ingest.maildir import boxes
from assistant.knowledge.source_rows import Move, StoredMail

HEAD_LIMIT = 1 << 20  # bytes of a file looked through for its Message-ID header


def elsewhere(
    vanished: list[StoredMail], maildirs: Iterable[Path]
) -> tuple[list[Move], list[StoredMail]]:
    """The moves of the `vanished` Maildir mails that a remembered Maildir of `maildirs` holds,
    and the rows still to remove (those found nowhere, and every mail not from a Maildir)."""
    from_maildir = [row for row in vanished if _in_maildir(row.source_path)]
    others = [row for row in vanished if not _in_maildir(row.source_path)]
    if not from_maildir:
        return [], vanished
    wanted: dict[str, list[StoredMail]] = {}
    for row in from_maildir:
        wanted.setdefault(unique_name(os.path.basename(row.source_path)), []).append(row)
    try:
        moves = _find(wanted, maildirs)
    except OSError:  # a folder that cannot be listed: no Maildir mail is removed this time
        return [], others
    return moves, others + [row for rows in wanted.values() for row in rows]


def unique_name(name: str) -> str:
    """A Maildir file name without its info and appended fields: what a move keeps."""
    return re.split(r"[:!,]", name, maxsplit=1)[0]


def _find(wanted: dict[str, list[StoredMail]], maildirs: Iterable[Path]) -> list[Move]:
    """Moves for the rows of `wanted` found in `maildirs`; those found leave `wanted`."""
    moves: list[Move] = []
    listed: set[str] = set()
    for root in maildirs:
        for folder, box in boxes(root):
            for sub in ("new", "cur"):
                where = os.path.realpath(box / sub)
                if not wanted:
                    return moves
                if where in listed:
                    continue
                listed.add(where)
                for name in _names(where):
                    for row in list(wanted.get(unique_name(name), ())):
                        file = os.path.join(where, name)
                        if _holds(file, row.message_id):
                            moves.append(Move(row.id, file, folder, None))
                            _take(wanted, unique_name(name), row)
    return moves


def _names(folder: str) -> list[str]:
    """The mail files' names in a cur/ or new/ folder (none when it does not exist)."""
    try:
        return [n for n in os.listdir(folder) if not n.startswith(".")]
    except (FileNotFoundError, NotADirectoryError):
        return []


def _take(wanted: dict[str, list[StoredMail]], name: str, row: StoredMail) -> None:
    wanted[name].remove(row)
    if not wanted[name]:
        del wanted[name]


def _holds(file: str, message_id: str) -> bool:
    """The headers of `file` name `message_id` (a mail without one is taken by its name; a file
    that cannot be read now is taken too: it is there, and what cannot be checked is kept)."""
    if not message_id:
        return True
    pattern = re.compile(rb"(?im)^message-id:\s*<" + re.escape(message_id.encode()) + rb">")
    try:
        with open(file, "rb") as fh:
            head = fh.read(HEAD_LIMIT)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    end = re.search(rb"\r?\n\r?\n", head)
    return pattern.search(head[: end.end() if end else len(head)]) is not None


def _in_maildir(path: str) -> bool:
    return os.path.basename(os.path.dirname(path)) in ("cur", "new")
