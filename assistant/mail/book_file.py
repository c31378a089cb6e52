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
from collections import Counter
from collections.abc import Callable
from functools import cache
from importlib import metadata
from pathlib import Path

from assistant.home import kept
from assistant.mail import address_book, people, person_names
from assistant.mail.people import People, Person

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

    def read(text: str) -> People:
        return People(_person(p) for p in json.loads(text))

    def write(book: People) -> str:
        return json.dumps([_row(p) for p in book.people], ensure_ascii=False)

    name = f"{version}-{rules()}"
    return kept(directory, f"people-{bank}-", name, read, build, write, "address book")


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
