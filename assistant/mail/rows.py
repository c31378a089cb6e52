"""A search result is a mail: ranked chunks become one row per mail (its best chunk's place),
and copies of one mail in several folders one row that lists their folders. Copies share the
Message-ID, the content hash, the sender, date and subject, or the subject and the words of
the text (a folder may record the Date or the From differently: knowledge/mailbox.py)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

from assistant.knowledge.bm25 import tokenize
from assistant.knowledge.mailbox import MailRef
from assistant.knowledge.retrieval import Hit

LINE_CHARS = 200  # a row's best line is cut here
_PREFIX = re.compile(r"^\s*((re|fw|fwd|aw|sv|tr)\s*:\s*|\[[^\]]*\]\s*)+", re.IGNORECASE)


@dataclass
class MailRow:
    """One mail of a result: who, when, what, the line that best matches, where it is kept."""

    rank: int
    document_id: int
    kind: str
    sender: str
    date: str
    subject: str
    line: str
    score: float
    chunk_id: int
    message_id: str = ""
    note_path: str = ""
    folders: list[str] = field(default_factory=list)
    copies: int = 1  # stored copies of this mail the row stands for (found among the hits)

    def as_dict(self) -> dict:
        return asdict(self)


def normalized_subject(subject: str) -> str:
    """Re:/Fwd:/AW:/[list] prefixes off, spaces folded, lower case."""
    return " ".join(_PREFIX.sub("", subject).split()).lower()


def copy_keys(ref: MailRef) -> list[str]:
    """What makes two stored mails copies of one: any key in common."""
    if ref.kind != "email":
        return [f"doc:{ref.document_id}"]
    keys = [f"content:{ref.copy_key}", f"head:{ref.sender}|{ref.date}|{ref.title}"]
    if ref.body_digest:
        subject = normalized_subject(ref.title)
        keys.append(f"text:{subject}|{ref.body_digest}")
    return keys + ([f"id:{ref.message_id}"] if ref.message_id else [])


def best_line(text: str, query: str) -> str:
    """The line of a chunk (its header line left out) holding most of the query's words."""
    lines = [ln.strip() for ln in text.split("\n")[1:] if ln.strip()] or [text.strip()]
    words = set(tokenize(query))
    best = max(lines, key=lambda ln: len(words & set(tokenize(ln)))) if words else lines[0]
    return best if len(best) <= LINE_CHARS else best[: LINE_CHARS - 1] + "…"


def mail_rows(
    hits: Sequence[Hit],
    refs: Mapping[int, MailRef],
    query: str,
    k: int,
    folders: Mapping[str, list[str]] | None = None,
) -> list[MailRow]:
    """The first `k` mails of `hits` (best first), one row each."""
    rows: list[MailRow] = []
    seen: dict[str, MailRow] = {}
    docs: dict[int, MailRow] = {}
    for hit in hits:
        ref = refs.get(hit.chunk_id)
        if ref is None:
            continue
        row = docs.get(ref.document_id) or next(
            (seen[key] for key in copy_keys(ref) if key in seen), None
        )
        if row is not None:
            if ref.document_id not in docs:
                row.copies += 1
                _add_folder(row, ref.folder)
            docs[ref.document_id] = row
            continue
        if len(rows) == k:
            continue
        row = _row(len(rows) + 1, hit, ref, query, (folders or {}).get(ref.copy_key, []))
        rows.append(row)
        docs[ref.document_id] = row
        seen.update((key, row) for key in copy_keys(ref))
    return rows


def _add_folder(row: MailRow, folder: str) -> None:
    if folder and folder not in row.folders:
        row.folders.append(folder)


def _row(rank: int, hit: Hit, ref: MailRef, query: str, folders: list[str]) -> MailRow:
    row = MailRow(
        rank=rank,
        document_id=ref.document_id,
        kind=ref.kind,
        sender=ref.sender_name or ref.sender if ref.kind == "email" else "note",
        date=ref.date[:10],
        subject=ref.title,
        line=best_line(hit.record.text, query),
        score=hit.score,
        chunk_id=hit.chunk_id,
        message_id=ref.message_id,
        note_path=ref.note_path,
        folders=list(folders),
    )
    _add_folder(row, ref.folder)
    return row
