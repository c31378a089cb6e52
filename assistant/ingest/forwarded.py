"""A mail forwarded as an attachment (a message/rfc822 part: Outlook's and Apple Mail's "forward
as attachment", each mail of a list's digest): its sender, date and subject, then its body's
text, indexed with the mail that carries it. The files attached to it are read as the outer
mail's attachments are (ingest/attachments.py walks into it)."""

from __future__ import annotations

from email.message import Message

from assistant.ingest.bounds import bound_text
from assistant.ingest.decode import decode_bytes
from assistant.ingest.html import html_to_text


def forwarded(part: Message) -> tuple[str, str, int]:
    """(a name for the forwarded mail, its text, its size); ("", "", 0) where the part holds
    no mail."""
    payload = part.get_payload()
    inner = payload[0] if isinstance(payload, list) and payload else None
    if not isinstance(inner, Message):
        return "", "", 0
    subject = _get(inner, "Subject")
    head = [f"{k}: {v}" for k in ("From", "Date", "Subject") if (v := _get(inner, k))]
    body, text = _body(inner), ""
    if body is not None:
        data = body.get_payload(decode=True)
        text, _, _ = decode_bytes(
            data if isinstance(data, bytes) else b"", body.get_content_charset()
        )
        text = html_to_text(text) if body.get_content_subtype() == "html" else text
        text, _ = bound_text(text)
    name = part.get_filename() or f"forwarded mail: {subject or '(no subject)'}"
    return name, "\n".join(head) + ("\n\n" + text.strip() if text.strip() else ""), _size(inner)


def _size(msg: Message) -> int:
    try:
        return len(msg.as_bytes())
    except Exception:  # noqa: BLE001 - one that cannot be written back: size unknown
        return 0


def _body(msg: Message) -> Message | None:
    try:
        body = msg.get_body(preferencelist=("plain", "html"))  # an EmailMessage's
    except Exception:  # noqa: BLE001 - an odd MIME tree: the walk below
        body = None
    if body is None:
        texts = (p for p in msg.walk() if p.get_content_maintype() == "text")
        body = next((p for p in texts if not p.get_filename()), None)
    return None if body is None or body.is_multipart() else body


def _get(msg: Message, name: str) -> str:
    try:
        return " ".join(str(msg.get(name, "") or "").split())
    except Exception:  # noqa: BLE001 - a malformed header: its raw value
        raw = [v for k, v in msg.raw_items() if k.lower() == name.lower()]
        return " ".join(" ".join(str(v) for v in raw).split())
