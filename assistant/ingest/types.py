"""What the readers yield: Documents to store, and Issues to report (never raised past a reader)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal


@dataclass(frozen=True)
class Attachment:
    name: str
    content_type: str
    size: int


@dataclass
class Document:
    kind: Literal["email", "note"]
    source_key: str  # Message-ID; "sha256:…" for a mail without one; "note:/abs/path" for a note
    title: str  # subject, or note title
    text: str  # the main text: what gets chunked
    content_hash: str
    source_path: str
    quoted: str = ""  # quoted reply tails and signature: stored, not chunked
    message_id: str = ""
    in_reply_to: str = ""  # the parent's Message-ID
    references: list[str] = field(default_factory=list)  # the References ids, oldest first
    sender: str = ""
    recipients: str = ""
    cc: str = ""
    # display names of From/To/Cc (else of X-From/X-To/X-cc), '; '-joined (ingest/names.py)
    sender_name: str = ""
    recipient_names: str = ""
    cc_names: str = ""
    date: datetime | None = None
    # how the mail says it went to many (emails.bulk_mark): "list" | "bulk" | "auto" | ""
    bulk: str = ""
    folder: str = ""
    source_offset: int | None = None
    attachments: list[Attachment] = field(default_factory=list)
    mtime: float | None = None
    replaced_chars: int = 0  # undecodable bytes replaced with U+FFFD
    undeclared_qp: bool = False  # the body was quoted-printable though no header said so: decoded
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Issue:
    """A problem with one message or file: where it is, what is wrong, what happened to it."""

    path: str
    where: str  # "offset 1234", "<message-id>", or ""
    reason: str
    severity: Literal["error", "warning"] = "error"
    offset: int | None = None  # where the message starts in its mbox (resuming reads it)

    def __str__(self) -> str:
        loc = f"{self.path} ({self.where})" if self.where else self.path
        return f"{self.severity}: {loc}: {self.reason}"


class NotAnEmail(ValueError):
    """Raised by the parser for bytes that carry no email headers at all."""
