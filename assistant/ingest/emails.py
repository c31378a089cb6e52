"""One raw RFC 822 message → a Document (stdlib `email`, policy.default)."""

from __future__ import annotations

import hashlib
import logging
import re
from datetime import UTC, datetime
from email import policy
from email.headerregistry import BaseHeader, HeaderRegistry
from email.message import EmailMessage, Message
from email.parser import BytesFeedParser
from email.utils import getaddresses, parsedate_to_datetime
from functools import lru_cache

from assistant.ingest.attachment_limits import DEFAULT_LIMITS
from assistant.ingest.attachments import leave_out_large_parts, left_out_size, read_attachments
from assistant.ingest.bounds import DEFAULT_MAX_PART_BYTES, cut_part
from assistant.ingest.decode import undeclared_qp, utf8_headers
from assistant.ingest.names import names
from assistant.ingest.parts import body_part, header, is_attachment, readable
from assistant.ingest.quotes import split_reply
from assistant.ingest.types import Document, Issue, NotAnEmail

_KEY_HEADERS = ("from", "to", "subject", "date", "message-id")
_FEED_BYTES = 1 << 16
_ID = re.compile(r"<([^<>\s]+)>")
_PARSED_HEADERS = 1024  # distinct (name, value) pairs kept parsed


class _ParsedOnce(HeaderRegistry):
    """policy.default's headers, each (name, value) parsed once: the policy parses a header
    again every time it is read, and a mail's Content-Type is read some nine times (the body's
    search, its charset, the attachments' walk) and most mails share a few Content-Types.
    A parsed header is a str with read-only attributes, so sharing one is safe."""

    def __init__(self) -> None:
        super().__init__()
        self._parse = lru_cache(maxsize=_PARSED_HEADERS)(super().__call__)

    def __call__(self, name: str, value: str) -> BaseHeader:
        return self._parse(name, value)


_POLICY = policy.default.clone(header_factory=_ParsedOnce())

log = logging.getLogger(__name__)
# a plain-text part this short may be a stub ("your mail client cannot display this message")
# beside the HTML that holds the mail: the HTML is read where it says several times more
STUB = 400
_WORDS = re.compile(r"\w+")


def parse_email(
    raw: bytes | bytearray,
    source_path: str,
    offset: int | None = None,
    folder: str = "",
    max_part_bytes: int = DEFAULT_MAX_PART_BYTES,
) -> Document:
    msg = _parse(utf8_headers(leave_out_large_parts(raw, DEFAULT_LIMITS.max_bytes)))
    present = {key.lower() for key in msg}
    if not present.intersection(_KEY_HEADERS):
        raise NotAnEmail("no email headers (From, To, Subject, Date or Message-ID) found")
    warnings: list[str] = []
    text_part = body_part(msg)
    body, replaced, as_sent = _body_text(text_part, warnings, max_part_bytes)
    if text_part is not None and text_part.get_content_subtype() == "plain" and len(body) < STUB:
        html = _html_alternative(msg)
        if html is not None:
            read = _body_text(html, [], max_part_bytes)
            if _a_stub(body, read[0]):
                text_part, (body, replaced, as_sent) = html, read
    for more in _more_plain_text(msg, text_part):  # split around an inline image (Apple Mail)
        text, n, _ = _body_text(more, warnings, max_part_bytes)
        body, replaced = f"{body}\n\n{text}" if text.strip() else body, replaced + n
    own, quoted = split_reply(body)
    attachments, sections, attachment_warnings = read_attachments(msg, body=text_part)
    message_id = _first_id(header(msg, "Message-ID"))
    subject = header(msg, "Subject").strip()
    sender = header(msg, "From")
    date = _parse_date(header(msg, "Date")) or _received_date(msg)
    # from the body alone, as sent: a mail stored before attachments were read, or before
    # quoted-printable that no header declared was decoded, is still unchanged
    hashed = own if as_sent is None else split_reply(as_sent)[0]
    content_hash = _hash(subject, sender, date, hashed)
    warnings += attachment_warnings + _defect_warnings(msg)
    return Document(
        kind="email",
        source_key=message_id or f"sha256:{content_hash[:32]}",
        title=subject or "(no subject)",
        text="\n\n".join(filter(None, [own, *sections])),  # after split_reply: no quote cuts
        quoted=quoted,
        content_hash=content_hash,
        source_path=source_path,
        source_offset=offset,
        message_id=message_id,
        in_reply_to=_first_id(header(msg, "In-Reply-To")),
        references=_ID.findall(header(msg, "References")),
        sender=sender,
        recipients=header(msg, "To"),
        cc=header(msg, "Cc"),
        sender_name=names(sender, header(msg, "X-From")),
        recipient_names=names(header(msg, "To"), header(msg, "X-To")),
        cc_names=names(header(msg, "Cc"), header(msg, "X-cc")),
        date=date,
        bulk=bulk_mark(msg),
        folder=folder,
        attachments=attachments,
        replaced_chars=replaced,
        undeclared_qp=as_sent is not None,
        warnings=warnings,
    )


def bulk_mark(msg: Message) -> str:
    """How the mail's headers say it was sent to many: "list" (List-Id, List-Unsubscribe or
    Precedence: list), "bulk" (Precedence: bulk or junk), "auto" (Auto-Submitted other than
    "no", RFC 3834), or "" for none of these. The night plans such mail last."""
    precedence = header(msg, "Precedence").strip().lower()
    if header(msg, "List-Id") or header(msg, "List-Unsubscribe") or precedence == "list":
        return "list"
    if precedence in ("bulk", "junk"):
        return "bulk"
    auto = header(msg, "Auto-Submitted").strip().lower()
    return "auto" if auto and auto != "no" else ""


def _parse(raw: bytes | bytearray) -> EmailMessage:
    """The message, fed to the parser a piece at a time: BytesParser.parsebytes would decode it
    whole into one string and read that through a StringIO, which copies it again at up to four
    bytes a character."""
    parser = BytesFeedParser(policy=_POLICY)
    with memoryview(raw) as view:
        for start in range(0, len(view), _FEED_BYTES):
            parser.feed(bytes(view[start : start + _FEED_BYTES]))
    return parser.close()


def display_name(address: str) -> str:
    """'Bram de Vries <bram@x.nl>' → 'Bram de Vries'; a bare address stays as it is."""
    pairs = getaddresses([address])
    if not pairs:
        return address
    name, addr = pairs[0]
    return name or addr or address


def _first_id(value: str) -> str:
    match = _ID.search(value)
    return match.group(1) if match else value.strip().strip("<>")


def _parse_date(value: str) -> datetime | None:
    if not value:
        return None
    try:
        date = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError) as exc:
        log.info("date %r unreadable (%s)", value, exc)
        return None
    return date.replace(tzinfo=UTC) if date.tzinfo is None else date


def _received_date(msg: Message) -> datetime | None:
    """Where the Date header is missing or unreadable: when the first server received the
    mail (its Received lines' dates, after the ';', the last one added first), else undated.
    An undated mail matches no date: term and comes last in the night's plan."""
    for line in reversed(msg.get_all("Received") or []):
        stamp = str(line).rpartition(";")[2].strip()
        date = _parse_date(stamp) if stamp else None
        if date is not None:
            return date
    return None


def _hash(subject: str, sender: str, date: datetime | None, text: str) -> str:
    key = "\x1f".join([subject, sender, date.isoformat() if date else "", text])
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def _body_text(
    part: Message | None, warnings: list[str], max_bytes: int
) -> tuple[str, int, str | None]:
    """The body part's text: cut to `max_bytes`, and only what is worth indexing (bounds.py);
    its undecodable bytes; and where it was quoted-printable that no header declared (decoded
    here), the text as sent, else None."""
    if part is None:
        return "", 0, None
    size = left_out_size(part)
    if size is not None:
        warnings.append(f"text part of {size / 1e6:.1f} MB left out (over the size cap)")
        return "", 0, None
    payload, cut = cut_part(part.get_payload(decode=True) or b"", max_bytes)
    decoded = undeclared_qp(payload) if _as_is(part) else None
    text, replaced, warning, left_out = readable(part, payload if decoded is None else decoded)
    warnings.extend(w for w in (cut, warning, *left_out) if w)
    as_sent = None if decoded is None else readable(part, payload)[0]
    return text, replaced if text else 0, as_sent  # bytes of a part left out were not replaced


def _more_plain_text(msg: Message, body: Message | None) -> list[Message]:
    """The other inline plain-text parts of a multipart/mixed mail whose body is plain text: a
    mail written around an inline image or file comes as text, image, text. Not the parts of an
    alternative group (the body's other renderings) nor of a forwarded mail."""
    if body is None or body.get_content_subtype() != "plain" or not msg.is_multipart():
        return []
    out: list[Message] = []

    def visit(part: Message) -> None:
        if part.get_content_type() == "message/rfc822":
            return
        if part.is_multipart():
            if part.get_content_subtype() != "alternative":
                for sub in part.get_payload():
                    visit(sub)
            return
        if part is not body and part.get_content_type() == "text/plain" and not is_attachment(part):
            out.append(part)

    if msg.get_content_subtype() == "mixed":
        visit(msg)
    return out


def _a_stub(plain: str, html: str) -> bool:
    """The plain text is no rendering of the HTML ("your mail client cannot display this
    message"): most of its words are not the HTML's, and the HTML says more."""
    ours, theirs = set(_WORDS.findall(plain.lower())), set(_WORDS.findall(html.lower()))
    return len(html.strip()) > len(plain.strip()) and len(ours & theirs) <= len(ours) / 2


def _html_alternative(msg: Message) -> Message | None:
    """The HTML a mail offers beside its plain text (multipart/alternative), if any."""
    try:
        return msg.get_body(preferencelist=("html",))
    except Exception:  # noqa: BLE001 - an odd MIME tree: the plain text stays
        return None


def _as_is(part: Message) -> bool:
    """Whether the part's bytes were taken as they are (no transfer encoding declared)."""
    declared = str(part.get("Content-Transfer-Encoding", "")).strip().lower()
    return declared in ("", "7bit", "8bit", "binary")


def _defect_warnings(msg: Message) -> list[str]:
    names = {type(d).__name__ for part in msg.walk() for d in getattr(part, "defects", [])}
    if names & {"StartBoundaryNotFoundDefect", "CloseBoundaryNotFoundDefect"}:
        return ["MIME structure is incomplete (message truncated?); imported what was readable"]
    return []


def read_message(
    raw: bytes | bytearray,
    source_path: str,
    where: str,
    offset: int | None = None,
    folder: str = "",
    max_part_bytes: int = DEFAULT_MAX_PART_BYTES,
) -> Document | Issue:
    """parse_email, with every failure turned into an Issue that names the file and place."""
    if not raw or raw.isspace():  # (raw.strip() would copy a message of any size)
        return Issue(source_path, where, "empty message; skipped", offset=offset)
    try:
        return parse_email(raw, source_path, offset, folder, max_part_bytes)
    except NotAnEmail as exc:
        return Issue(source_path, where, f"not an email: {exc}; skipped", offset=offset)
    except Exception as exc:  # noqa: BLE001 - one bad message must never stop an import
        # an unexpected failure is likely a parser bug: the log keeps its traceback
        log.warning("%s %s: message skipped", source_path, where, exc_info=True)
        reason = f"could not parse ({type(exc).__name__}: {exc}); skipped"
        return Issue(source_path, where, reason, offset=offset)
