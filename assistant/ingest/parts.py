"""A message's headers and text parts, read whatever its MIME tree: the mail's own
(ingest/emails.py), its attachments' (ingest/attachments.py) and a forwarded mail's inside it
(ingest/forwarded.py) are read alike."""

from __future__ import annotations

import logging
import re
from email.errors import HeaderParseError
from email.header import decode_header, make_header
from email.message import Message

from assistant.ingest.bounds import bound_text
from assistant.ingest.decode import decode_bytes
from assistant.ingest.html import html_to_text

log = logging.getLogger(__name__)
_NAME_PARAMS = {"content-disposition": "filename", "content-type": "name"}


def header(msg: Message, name: str) -> str:
    """A header's value; a malformed one's raw text rather than the whole message lost."""
    try:
        value = msg.get(name)
        return "" if value is None else str(value)
    except Exception as exc:  # noqa: BLE001 - a malformed header must not cost the whole message
        log.info("header %s unreadable (%s: %s); raw values kept", name, type(exc).__name__, exc)
        raw = [v for k, v in msg.raw_items() if k.lower() == name.lower()]  # not parsed again
        return " ".join(str(v) for v in raw)


def readable(part: Message, payload: bytes) -> tuple[str, int, str | None, list[str]]:
    """(text, undecodable bytes, charset warning, warnings of what was left out)."""
    text, replaced, warning = decode_bytes(payload, part.get_content_charset())
    if part.get_content_subtype() == "html":
        text = html_to_text(text)
    text, left_out = bound_text(text)
    return text, replaced, warning, left_out


def body_part(msg: Message) -> Message | None:
    """The part that holds the message's text: its plain text, else its HTML, else its first
    text part that is no attachment."""
    try:
        part = msg.get_body(preferencelist=("plain", "html"))
    except Exception as exc:  # noqa: BLE001 - odd MIME trees: fall back to a walk
        log.info("MIME tree unreadable (%s: %s); walking its parts", type(exc).__name__, exc)
        part = None
    if part is not None:
        return part
    for sub in msg.walk():
        if sub.get_content_maintype() == "text" and not is_attachment(sub):
            return sub
    return None


def file_name(part: Message) -> str | None:
    """The part's file name; the whole of one a mailer wrote unquoted with spaces in it
    (`filename=Rechnung März.pdf`), of which the email package keeps only the first word, or
    as an unquoted encoded word (`filename==?utf-8?Q?…?=`), of which it keeps nothing."""
    name = part.get_filename()
    for key, value in part.raw_items():
        param = _NAME_PARAMS.get(key.lower())
        found = re.search(rf"(?i);\s*{param}\s*=([^;]*)", str(value)) if param else None
        whole = _header_text(found.group(1)) if found else ""
        if not name and whole.startswith("=?"):
            return _encoded_words(whole) or None
        if name and whole.startswith(name) and whole != name:
            return whole
    return name


def _encoded_words(text: str) -> str:
    """RFC 2047 encoded words as the text they stand for ("" where they are broken)."""
    try:
        return str(make_header(decode_header(text))).strip()
    except (HeaderParseError, LookupError, UnicodeDecodeError, ValueError):
        return ""


def _header_text(raw: str) -> str:
    """A raw header value's text, unfolded; its 8-bit bytes (which the parser keeps as
    surrogates) read as UTF-8, else Windows-1252."""
    unfolded = re.sub(r"\r?\n", "", raw).strip()
    return decode_bytes(unfolded.encode(errors="surrogateescape"), None)[0]


def is_attachment(part: Message) -> bool:
    return disposed_as_attachment(part) or bool(part.get_filename())


def disposed_as_attachment(part: Message) -> bool:
    return (part.get("Content-Disposition") or "").lower().startswith("attachment")
