"""The senders a mailbox holds, for resolving a name in a query term (`from:skilling`) or in a
question ("from Sherri") to the stored From values, which the sender index answers."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from assistant.mail.filters import Sender

_PIECE = re.compile(r"[a-z]+")
# a name word this long also matches an address's local part that starts or ends with it, after
# at most one initial ("paddock": bpaddock, "kaminski": vkaminski; not "sherri": john.sherriff)
_CONTAINED_MIN = 4


def sender(stored: str, name: str, count: int = 0) -> Sender:
    local = stored.lower().rsplit("<", 1)[-1].split("@", 1)[0]
    tokens = set(_PIECE.findall(name.lower())) | set(_PIECE.findall(local)) | {local}
    return Sender(stored, name, count, frozenset(tokens))


class People:
    def __init__(self, senders: Iterable[Sender]) -> None:
        self.senders = list(senders)

    @classmethod
    def of(cls, rows: Iterable[tuple[str, str, int]]) -> People:
        """From KnowledgeStore.mail.senders() rows."""
        return cls(sender(s, n, c) for s, n, c in rows)

    def containing(self, text: str) -> list[Sender]:
        """Senders whose address or name holds every word of `text` (a `from:` term)."""
        words = text.lower().split()
        return [
            s
            for s in self.senders
            if all(w in s.stored.lower() or w in s.name.lower() for w in words)
        ]

    def named(self, words: Sequence[str]) -> list[Sender]:
        """Senders every one of whose `words` (a name in a question) is a word of their name or
        address, or lies inside the address's local part (a long word only)."""
        wanted = [w.lower() for w in words if w]
        return [s for s in self.senders if wanted and all(_names(s, w) for w in wanted)]


def _names(s: Sender, word: str) -> bool:
    if word in s.tokens:
        return True
    local = s.stored.lower().rsplit("<", 1)[-1].split("@", 1)[0]
    if len(word) < _CONTAINED_MIN:
        return False
    return local.startswith(word) or local[1:].startswith(word) or local.endswith(word)
