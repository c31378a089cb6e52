"""The address book kept on disk beside the indexes (<home>/index/people-*.json), so a command in
a fresh process (every `search`, `ask`, `people` of the CLI) reads it instead of building it
from every mail's headers and first and last lines (bench/results/commands_scale.json).

A file is named by the knowledge bank's identity, its chunks version (which every import,
change and removal of mail moves) and the address book's rules: a digest of the modules that
build it and of the name libraries' versions, so an upgrade that changes how people are found
never reads a book built by the old rules. A file that cannot be read is built again."""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from collections.abc import Callable
from functools import cache
from importlib import metadata
from pathlib import Path

from assistant.home import make_private_dir, replace_atomically
from assistant.mail import address_book, people, person_names
from assistant.mail.people import People, Person

log = logging.getLogger(__name__)
_SETS = ("addresses", "first", "called", "last", "full")
_LIBRARIES = ("nameparser", "nicknames")


@cache
def rules() -> str:
    """A digest of what the book is built by: its modules' source and the libraries' versions."""
    digest = hashlib.sha256()
    for module in (address_book, people, person_names):
        digest.update(Path(module.__file__ or "").read_bytes())
    for name in _LIBRARIES:
        try:
            digest.update(f"{name} {metadata.version(name)}".encode())
        except metadata.PackageNotFoundError:
            digest.update(name.encode())
    return digest.hexdigest()[:16]


def load_or_build(directory: Path, bank: str, version: int, build: Callable[[], People]) -> People:
    """The book of the knowledge bank `bank` at chunks `version` from `directory`, else
    `build()` saved there (the bank's books of other versions or rules removed)."""
    path = directory / f"people-{bank}-{version}-{rules()}.json"
    if path.exists():
        try:
            return People(_person(p) for p in json.loads(path.read_text("utf-8")))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("%s: unreadable address book (%s); building it again", path, exc)
    book = build()
    try:
        make_private_dir(directory)
        text = json.dumps([_row(p) for p in book.people], ensure_ascii=False)
        replace_atomically(path, lambda tmp: tmp.write_text(text, "utf-8"), ".json")
        for old in directory.glob(f"people-{bank}-*.json"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError as exc:  # a full disk or a read-only home: the book is used all the same
        log.warning("%s: could not save the address book (%s)", path, exc)
    return book


def _row(person: Person) -> dict:
    row = {key: sorted(getattr(person, key)) for key in _SETS}
    return row | {
        "key": person.key,
        "name": person.name,
        "froms": sorted(person.froms),
        "names": list(person.names.items()),  # in order: most_common() breaks ties by it
        "sent": person.sent,
        "received": person.received,
        "shared": person.shared,
        "owner": person.owner,
        "why": person.why,
    }


def _person(row: dict) -> Person:
    return Person(
        key=row["key"],
        name=row["name"],
        froms={(stored, name) for stored, name in row["froms"]},
        names=Counter(dict(row["names"])),
        sent=row["sent"],
        received=row["received"],
        shared=row["shared"],
        owner=row["owner"],
        why=list(row["why"]),
        **{key: set(row[key]) for key in _SETS},
    )
