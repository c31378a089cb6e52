"""A mail forwarded as an attachment (a message/rfc822 part: Outlook's and Apple Mail's "forward
as attachment", each mail of a list's digest): its sender, date and subject, then its body's
text, indexed with the mail that carries it. The files attached to it are read as the outer
mail's attachments are (ingest/attachments.py walks into it)."""

from __future__ import annotations

from email.message import Message

from assistant.ingest.parts import body_part, file_name, header, readable


def forwarded(part: Message) -> tuple[str, str, int]:
    """(a name for the forwarded mail, its text, its size); ("", "", 0) where the part holds
    no mail."""
    payload = part.get_payload()
    inner = payload[0] if isinstance(payload, list) and payload else None
    if not isinstance(inner, Message):
        return "", "", 0
    subject = " ".join(header(inner, "Subject").split())
    head = [
        f"{k}: {v}"
        for k in ("From", "Date", "Subject")
        if (v := " ".join(header(inner, k).split()))
    ]
    body, text = body_part(inner), ""
    if body is not None:
        data = body.get_payload(decode=True)
        text = readable(body, data if isinstance(data, bytes) else b"")[0]
    name = file_name(part) or f"forwarded mail: {subject or '(no subject)'}"
    return name, "\n".join(head) + ("\n\n" + text.strip() if text.strip() else ""), _size(inner)


def _size(msg: Message) -> int:
    try:
        return len(msg.as_bytes())
    except Exception:  # noqa: BLE001 - one that cannot be written back: size unknown
        return 0
