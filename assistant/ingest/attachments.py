"""A mail's attachments → text to index with the mail: PDF (pypdf), Word (python-docx), Excel
(openpyxl), CSV, calendar invitations (icalendar), HTML (inscriptis) and plain text parts.

The answer to a question is often in the attached PDF or the invitation, not in the mail's few
lines. Each file is read within bounds (`Limits`): a file over the byte cap is not read, a PDF
only to its page cap, the text only to its character cap and its time limit, an Office file only
when its zip members' declared sizes are sane (a zip bomb is refused before the library sees it).
Whatever goes wrong with one file becomes one warning that names it; the mail imports anyway.

The text of each file becomes a section of the mail's text that starts with a header line naming
the file (`section`); the chunker keeps that line at the top of each chunk of the section."""

from __future__ import annotations

import io
import re
import time
import zipfile
from collections.abc import Iterator
from email.message import Message
from pathlib import PurePath

from assistant.ingest.attachment_formats import FORMATS, Cut, Refused
from assistant.ingest.attachment_limits import DEFAULT_LIMITS, Limits
from assistant.ingest.bounds import bound_text
from assistant.ingest.forwarded import forwarded
from assistant.ingest.parts import disposed_as_attachment, file_name, is_attachment
from assistant.ingest.types import Attachment

SECTION_START = re.compile(r"^\[Attachment: (.+)\]$", re.M)
# The header `leave_out_large_parts` gives a part whose body it left out: the body's size
LEFT_OUT = "X-Assistant-Left-Out"
# Where a run of base64 lines ends: the first byte outside their alphabet. (A regex for the run
# itself would keep a backtracking state per line: hundreds of bytes a line of a large body.)
_NOT_BASE64 = re.compile(rb"[^A-Za-z0-9+/=\r\n]")
_BLANK_LINE = re.compile(rb"\n\r?\n")  # starts with a literal: fast over a large body

_KINDS_BY_EXTENSION = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".xlsx": "xlsx",
    ".xlsm": "xlsx",
    ".csv": "csv",
    ".ics": "ics",
    ".html": "html",
    ".htm": "html",
    ".txt": "text",
    ".md": "text",
    ".log": "text",
}
_KINDS_BY_TYPE = {
    "application/pdf": "pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "text/csv": "csv",
    "text/calendar": "ics",
    "application/ics": "ics",
    "text/html": "html",
    "text/plain": "text",
}
UNTYPED = "application/octet-stream"  # what mailers send a file as whose type they do not know
_PDF_HEAD = 1024  # a PDF starts with its header, "%PDF-" (some writers put blank lines first)
_PARSED_WHOLE = {"ics": "a calendar", "html": "an HTML file"}
_ZIPPED = {"docx", "xlsx"}


def section(name: str, text: str) -> str:
    """One attachment's part of the mail's text: its header line, then its text."""
    return f"[Attachment: {name}]\n{text}"


def kind_of(name: str, content_type: str, data: bytes = b"") -> str | None:
    """Which reader a file gets: by its extension when that names one, else by its type; a
    file of no type (application/octet-stream) by its first bytes, when they are a PDF's header
    (not merely hold one: a zip of PDFs does)."""
    by_name = _KINDS_BY_EXTENSION.get(PurePath(name.lower()).suffix)
    by_type = _KINDS_BY_TYPE.get(content_type.lower())
    if by_name or by_type or content_type.lower() != UNTYPED:
        return by_name or by_type
    return "pdf" if data[:_PDF_HEAD].lstrip().startswith(b"%PDF-") else None


def extract_text(
    name: str,
    content_type: str,
    data: bytes,
    charset: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[str, str | None]:
    """The text of one attached file, and at most one warning naming the file; ("", None) for
    a kind of file that has no reader here (images, archives)."""
    kind = kind_of(name, content_type, data)
    if kind is None:
        return "", None
    text, problem = _read(kind, data, charset, limits)
    return text, (f"attachment {name!r}: {problem}" if problem else None)


def _read(kind: str, data: bytes, charset: str | None, limits: Limits) -> tuple[str, str | None]:
    if len(data) > limits.max_bytes:
        return "", _too_big(len(data), limits)
    if kind in _PARSED_WHOLE and len(data) > limits.max_whole_bytes:
        what, cap = _PARSED_WHOLE[kind], limits.max_whole_bytes / 1e6
        return "", f"{what} of {len(data) / 1e6:.1f} MB, over the {cap:g} MB cap; not read"
    if kind in _ZIPPED:
        refused = zip_refusal(data, limits)
        if refused:
            return "", refused
    text, problem = _collect(FORMATS[kind](data, charset, limits), limits)
    kept, left_out = bound_text(text)
    if left_out and not kept:
        return "", "its text is binary data; not indexed"
    if left_out:
        problem = problem or left_out[0]
    return kept, problem


def _too_big(size: int, limits: Limits) -> str:
    return f"{size / 1e6:.1f} MB, over the {limits.max_bytes / 1e6:g} MB cap; not read"


def zip_refusal(data: bytes, limits: Limits) -> str | None:
    """Why an Office file (a zip) is not handed to its library, or None. The declared sizes are
    a bound the stdlib keeps: zipfile stops inflating a member at its declared size."""
    try:
        members = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        return f"not a readable Office file ({type(exc).__name__}: {exc}); not indexed"
    if len(members) > limits.max_members:
        return f"a zip of {len(members):,} members (zip bomb?); not indexed"
    total = sum(m.file_size for m in members)
    if total > limits.max_unzipped:
        return f"inflates to {total / 1e6:,.0f} MB (zip bomb?); not indexed"
    for m in members:
        if m.file_size > limits.ratio_floor and m.file_size > limits.max_ratio * max(
            1, m.compress_size
        ):
            ratio = m.file_size // max(1, m.compress_size)
            return f"member {m.filename!r} inflates {ratio:,} times (zip bomb?); not indexed"
    return None


def _collect(blocks: Iterator[str], limits: Limits) -> tuple[str, str | None]:
    """Join the blocks a format reader yields, checking the character cap and the time limit
    after each one; a reader's own stop (`Cut`), refusal (`Refused`) or failure ends it."""
    start = time.monotonic()
    kept: list[str] = []
    size = 0
    try:
        for block in blocks:
            block = block.strip()
            if block:
                kept.append(block)
                size += len(block) + 2
            if size > limits.max_chars:
                text = _join(kept)[: limits.max_chars]
                return text, f"text cut at {limits.max_chars:,} characters"
            if time.monotonic() - start > limits.max_seconds:
                return _join(kept), f"reading stopped at the {limits.max_seconds:g} s time limit"
    except Refused as exc:
        return "", str(exc)
    except Cut as exc:
        return _join(kept), str(exc)
    except Exception as exc:  # noqa: BLE001 - a broken or hostile file costs only its own text
        done = f"; its first {size:,} characters kept" if kept else "; not indexed"
        return _join(kept), f"unreadable ({type(exc).__name__}: {_short(exc)}){done}"
    return _join(kept), None


def _join(blocks: list[str]) -> str:
    return "\n\n".join(blocks)


def _short(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 120 else text[:117] + "..."


def read_attachments(
    msg: Message, limits: Limits = DEFAULT_LIMITS, body: Message | None = None
) -> tuple[list[Attachment], list[str], list[str]]:
    """Every attached file of `msg` (listed by name), the text sections of those that have text,
    and a warning per file that could not be read whole. An invitation sent inline (a
    text/calendar part, as Outlook sends them) is read as well, though it is no attachment; a
    text already read (the same invitation attached too) is not added again. The `body` part,
    when it has a file name too, is listed but not read again."""
    listed: list[Attachment] = []
    sections: list[str] = []
    warnings: list[str] = []
    for part in msg.walk():
        if part.get_content_type() == "message/rfc822":  # a mail forwarded as an attachment
            name, text, size = forwarded(part)
            if name:
                listed.append(Attachment(name=name, content_type="message/rfc822", size=size))
                sections.append(section(name, text))
            continue  # its own attachments come next in the walk, read as any
        if part.is_multipart():
            continue
        attached = is_attachment(part)
        if not attached and part.get_content_type() != "text/calendar":
            continue
        name = file_name(part) or ("(unnamed)" if attached else "invitation.ics")
        size = _encoded_size(part)
        if attached:
            listed.append(Attachment(name=name, content_type=part.get_content_type(), size=size))
        if part is body:
            continue
        try:
            text, warning = _part_text(part, name, size, limits)
        except Exception as exc:  # noqa: BLE001 - an odd MIME part costs only its own text
            text, warning = "", f"attachment {name!r}: unreadable part ({type(exc).__name__})"
        if text and not any(s.endswith(f"]\n{text}") for s in sections):
            sections.append(section(name, text))  # (once: Outlook sends its invitation twice)
        if warning:
            warnings.append(warning)
    return listed, sections, warnings


def leave_out_large_parts(raw: bytes | bytearray, max_bytes: int) -> bytes | bytearray:
    """`raw` without the base64 bodies of its parts that are over `max_bytes` decoded, each part
    given a `LEFT_OUT` header with its size instead; `raw` itself when there are none. Such a
    part is only listed and warned about, yet the stdlib parser would hold it several times
    over (its lines, then one string); a text body that big is left out the same way."""
    if len(raw) * 3 // 4 <= max_bytes:
        return raw
    out, last, blank = bytearray(), 0, _next_blank(raw, 0)
    while blank is not None:
        head_end, body = blank
        end = _base64_end(raw, body)
        size = (end - body) * 3 // 4
        if size > max_bytes:
            eol = b"\r\n" if raw[head_end] == ord("\r") else b"\n"
            out += raw[last:head_end] + eol + f"{LEFT_OUT}: {size}".encode() + eol + eol
            last = end
        blank = _next_blank(raw, max(end, body))
    if not last:
        return raw
    out += raw[last:]
    return bytes(out)


def _next_blank(raw: bytes | bytearray, start: int) -> tuple[int, int] | None:
    """(where the line before it ends, where the line after it starts) of the first blank line
    from `start`: where a header block ends and its body begins."""
    found = _BLANK_LINE.search(raw, start)
    if found is None:
        return None
    i = found.start()  # the LF that ends the line before; with CRLF ends, the CR before it
    return (i - 1 if i and raw[i - 1] == ord("\r") else i), found.end()


def _base64_end(raw: bytes | bytearray, start: int) -> int:
    """Where the base64 lines from `start` end: the start of the first line with a byte outside
    their alphabet (a boundary line, text), or the end of `raw`."""
    other = _NOT_BASE64.search(raw, start)
    if other is None:
        return len(raw)
    return max(start, raw.rfind(b"\n", start, other.start()) + 1)


def left_out_size(part: Message) -> int | None:
    """The size of a body `leave_out_large_parts` left out, or None."""
    value = str(part.get(LEFT_OUT) or "").strip()
    return int(value) if value.isdigit() else None


def _encoded_size(part: Message) -> int:
    """The decoded size of a part, told from its encoded payload without decoding it."""
    left_out = left_out_size(part)
    if left_out is not None:
        return left_out
    raw = part.get_payload()
    size = len(raw) if isinstance(raw, str | bytes) else 0
    if (part.get("Content-Transfer-Encoding") or "").lower() == "base64":
        size = size * 3 // 4
    return size


def _part_text(part: Message, name: str, size: int, limits: Limits) -> tuple[str, str | None]:
    ctype = part.get_content_type()
    kind = kind_of(name, ctype)
    if kind is None and (ctype != UNTYPED or size > limits.max_bytes):
        return "", None  # (a file of no type is told by its first bytes: extract_text)
    if kind == "html" and not disposed_as_attachment(part):
        return "", None  # an inline HTML part with a name is the body's alternative, not a file
    if size > limits.max_bytes:  # refused before the payload is decoded: no copy of it made
        return "", f"attachment {name!r}: {_too_big(size, limits)}"
    data = part.get_payload(decode=True) or b""
    return extract_text(name, ctype, data, part.get_content_charset(), limits)
