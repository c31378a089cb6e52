"""A generated hostile mailbox: one mbox and one Maildir in which valid mail of known Message-IDs
sits among truncated, mis-encoded, garbage, huge, duplicate and empty messages, and mail with
hostile attached files (encrypted, a zip bomb, binary labelled as text).

`write_hostile_mailbox` returns what an import of `[mbox, maildir]` (in that order) must do: which
Message-IDs end up stored with which bodies, and which items are reported, where (file and offset).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path

from tests.attachment_files import DOCX, PDF, encrypted_pdf, zip_bomb_docx
from tests.conftest import make_email

DOMAIN = "hostile.test"
SEPARATOR = b"From sender@hostile.test Thu Jan  1 00:00:00 2026\n"

# charset label → a body written in it; each must come back exactly
CHARSET_BODIES = {
    "utf-8": "Smörgåsbord, crème brûlée och 東京",
    "iso-8859-1": "Bröllopet i Uppsala, hälsningar från Åsa",
    "windows-1252": "Offerte €14.250 “inclusief” btw – akkoord?",
    "koi8-r": "Привет из Москвы, встреча в пятницу",
    "shift_jis": "会議は金曜日の午後三時です",
}


@dataclass(frozen=True)
class Expected:
    """An item the import must report: in which file, where in it ("" for a Maildir file), and a
    phrase its reason contains."""

    path: Path
    where: str
    reason: str


@dataclass
class HostileMailbox:
    mbox: Path
    maildir: Path
    bodies: dict[str, set[str]] = field(default_factory=dict)  # Message-ID → its stored bodies
    errors: list[Expected] = field(default_factory=list)  # skipped, reported as errors
    warnings: list[Expected] = field(default_factory=list)  # kept, reported as warnings
    ignored: set[str] = field(default_factory=set)  # Message-IDs that must not be imported

    @property
    def paths(self) -> list[Path]:
        return [self.mbox, self.maildir]

    @property
    def stored_count(self) -> int:
        """How many documents the import must store."""
        return sum(len(b) for b in self.bodies.values())

    def expect(self, msg_id: str, body: str) -> str:
        self.bodies.setdefault(msg_id, set()).add(body)
        return f"<{msg_id}>"


class _Mbox:
    """Writes messages mboxrd-style and returns the offset of each one's From_ line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fh = path.open("wb")
        self.offset = 0

    def add(self, raw: bytes, separator: bool = True, end: bytes = b"\n\n") -> str:
        start = self.offset
        lines = raw.split(b"\n")
        body = b"\n".join(b">" + ln if ln.startswith(b"From ") else ln for ln in lines)
        data = (SEPARATOR if separator else b"") + body.rstrip(b"\n") + end
        self.fh.write(data)
        self.offset += len(data)
        return f"offset {start}"

    def close(self) -> None:
        self.fh.close()


def _raw(msg: EmailMessage) -> bytes:
    return msg.as_bytes().replace(b"\r\n", b"\n")


def _valid(box: HostileMailbox, tag: str, i: int) -> bytes:
    body = f"Valid mail {tag}{i}: the meeting about topic {tag}{i} moves to room {100 + i}."
    msg_id = box.expect(f"{tag}{i}@{DOMAIN}", body)
    return _raw(make_email(subject=f"Valid {tag}{i}", body=body, msgid=msg_id))


def _with_attachment(box: HostileMailbox, msg_id: str, size: int, rng: random.Random) -> bytes:
    body = f"Attached the file for {msg_id}."
    payload = rng.randbytes(size)
    msg = make_email(
        subject=f"Attachment {msg_id}",
        body=body,
        msgid=box.expect(msg_id, body),
        attachments=[("photos.tar", "application/x-tar", payload)],
    )
    return _raw(msg)


Planned = tuple[bytes, tuple[str, str] | None]  # message bytes, expected (severity, reason)


def _charset_messages(box: HostileMailbox) -> list[Planned]:
    out: list[Planned] = []
    for cs, text in CHARSET_BODIES.items():
        msg_id = box.expect(f"cs-{cs}@{DOMAIN}", text)
        out.append((_raw(make_email(subject=cs, body=text, charset=cs, msgid=msg_id)), None))
    unknown = "naïve café"
    head = (
        f"From: a@{DOMAIN}\nSubject: unknown label\nMessage-ID: "
        f"{box.expect(f'cs-unknown@{DOMAIN}', unknown)}\n"
        "Content-Type: text/plain; charset=x-made-up-42\n\n"
    )
    out.append((head.encode() + unknown.encode("cp1252"), ("warning", "unknown charset")))
    no_label = "Grüße aus Köln"  # 8-bit bytes, no Content-Type at all
    head = f"From: a@{DOMAIN}\nSubject: no charset\nMessage-ID: "
    head += f"{box.expect(f'cs-none@{DOMAIN}', no_label)}\n\n"
    out.append((head.encode() + no_label.encode("cp1252"), None))
    return out


def _attachment_messages(box: HostileMailbox, rng: random.Random) -> list[Planned]:
    """Mails with a hostile attached file (each one warning naming the file; the mail's text
    stored), and one with a readable file, whose text is stored under its name."""
    out: list[Planned] = []
    hostile = [
        ("locked.pdf", PDF, encrypted_pdf([["Salary slip"]], "secret"), "'locked.pdf': encrypted"),
        ("bomb.docx", DOCX, zip_bomb_docx(5), "'bomb.docx': member"),
        ("dump.txt", "text/plain", rng.randbytes(20_000), "'dump.txt': its text is binary"),
    ]
    for i, (name, ctype, data, reason) in enumerate(hostile):
        body = f"The file {name} is attached."
        msg_id = box.expect(f"att{i}@{DOMAIN}", body)
        msg = make_email(subject=name, body=body, msgid=msg_id, attachments=[(name, ctype, data)])
        out.append((_raw(msg), ("warning", reason)))
    body, code = "The gate code, as asked.", "Gate code: 4471, valid until Sunday."
    msg_id = box.expect(f"att-ok@{DOMAIN}", f"{body}\n\n[Attachment: gate.txt]\n{code}")
    msg = make_email(subject="Gate", body=body, msgid=msg_id, attachments=[
        ("gate.txt", "text/plain", code.encode())])  # fmt: skip
    out.append((_raw(msg), None))
    return out


def _garbage(rng: random.Random, size: int = 4096) -> bytes:
    """Random bytes with no header-like line (no ':')."""
    return rng.randbytes(size).replace(b":", b".").replace(b"\r", b".")


def write_hostile_mailbox(
    root: Path, n_valid: int = 30, huge_mb: int = 20, seed: int = 0
) -> HostileMailbox:
    """Write `root/hostile.mbox` and `root/Maildir`; `n_valid` (at least 10: some reuse the ids
    of mails 3, 7 and 9) plain valid mails in each, the hostile ones shuffled in by `seed`."""
    if n_valid < 10:
        raise ValueError("n_valid must be at least 10")
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    box = HostileMailbox(root / "hostile.mbox", root / "Maildir")
    _write_mbox(box, n_valid, huge_mb, rng)
    _write_maildir(box, n_valid, rng)
    return box


def _write_mbox(box: HostileMailbox, n_valid: int, huge_mb: int, rng: random.Random) -> None:
    valid = [_valid(box, "mb", i) for i in range(n_valid)]
    out = _Mbox(box.mbox)
    # The first message has lost its From_ line: the file starts with headers.
    box.warnings.append(Expected(box.mbox, out.add(valid[0], separator=False), "'From ' line"))
    plan = _mbox_plan(box, valid, huge_mb, rng)
    rng.shuffle(plan)
    for raw, outcome in plan:
        where = out.add(raw)
        if outcome is not None:
            kind, reason = outcome
            (box.errors if kind == "error" else box.warnings).append(
                Expected(box.mbox, where, reason)
            )
    # A different mail reusing an id seen earlier: both kept, the second with a warning.
    clash = "A different mail that reuses the id of mb3."
    raw = _raw(make_email(subject="Clash", body=clash, msgid=box.expect(f"mb3@{DOMAIN}", clash)))
    box.warnings.append(Expected(box.mbox, out.add(raw), "same Message-ID"))
    box.errors.append(Expected(box.mbox, out.add(b""), "empty message"))
    # The file ends inside the headers of its last message: what is there is kept, with a warning.
    msg_id = box.expect(f"cut-end@{DOMAIN}", "")
    cut = f"From: a@{DOMAIN}\nMessage-ID: {msg_id}\nSubject: The file ends he".encode()
    box.warnings.append(Expected(box.mbox, out.add(cut, end=b""), "truncated"))
    out.close()


def _mbox_plan(
    box: HostileMailbox, valid: list[bytes], huge_mb: int, rng: random.Random
) -> list[Planned]:
    """Everything between the first message and the last three, in no particular order."""
    plan: list[Planned] = [(raw, None) for raw in valid[1:]]
    plan.append((valid[3], None))  # an exact duplicate: stored once, no issue
    plan += _charset_messages(box)
    plan += _attachment_messages(box, rng)
    plan.append((_garbage(rng), ("error", "not an email")))
    plan.append((_with_attachment(box, f"huge@{DOMAIN}", huge_mb << 20, rng), None))
    # Cut inside its attachment, the next From_ line follows: the text part is kept.
    cut = _with_attachment(box, f"cut-mime@{DOMAIN}", 30_000, rng)
    plan.append((cut[: len(cut) * 2 // 3], ("warning", "MIME structure is incomplete")))
    no_from = "A mail without a From header."
    msg_id = box.expect(f"no-from@{DOMAIN}", no_from)
    msg = make_email(subject="No sender", body=no_from, msgid=msg_id)
    del msg["From"]
    plan.append((_raw(msg), None))
    escaped = "From the desk of Maya:\nthe line above starts with 'From '."
    msg_id = box.expect(f"from-line@{DOMAIN}", escaped)
    plan.append((_raw(make_email(subject="From line", body=escaped, msgid=msg_id)), None))
    crlf = "Written with CRLF line ends."
    msg_id = box.expect(f"crlf@{DOMAIN}", crlf)
    msg = make_email(subject="CRLF", body=crlf, msgid=msg_id)
    plan.append((msg.as_bytes(policy=msg.policy.clone(linesep="\r\n")), None))
    return plan


def _write_maildir(box: HostileMailbox, n_valid: int, rng: random.Random) -> None:
    root = box.maildir
    for folder in (root, root / ".Archive"):
        for sub in ("cur", "new", "tmp"):
            (folder / sub).mkdir(parents=True, exist_ok=True)
    for i in range(n_valid):
        folder = root / ".Archive" if i % 5 == 4 else root
        name = f"17000{i:05d}.M{i}P1.host" + (":2,S" if i % 2 else "")
        (folder / ("cur" if i % 2 else "new") / name).write_bytes(_valid(box, "md", i))
    files = root / "cur"
    (files / "garbage:2,").write_bytes(_garbage(rng))
    box.errors.append(Expected(files / "garbage:2,", "", "not an email"))
    (files / "empty:2,").write_bytes(b"")
    box.errors.append(Expected(files / "empty:2,", "", "empty message"))
    cut = _with_attachment(box, f"md-cut-mime@{DOMAIN}", 30_000, rng)
    (files / "cut:2,").write_bytes(cut[: len(cut) // 2])
    box.warnings.append(Expected(files / "cut:2,", "", "MIME structure is incomplete"))
    (files / "copy-of-mb7:2,S").write_bytes(_valid(box, "mb", 7))  # the mbox's, byte for byte
    clash = "The Maildir's own mail under the id of mb9."
    raw = _raw(make_email(subject="Clash", body=clash, msgid=box.expect(f"mb9@{DOMAIN}", clash)))
    (files / "clash-mb9:2,S").write_bytes(raw)
    box.warnings.append(Expected(files / "clash-mb9:2,S", "", "same Message-ID"))
    half = f"From: a@{DOMAIN}\nMessage-ID: <in-tmp@{DOMAIN}>\n\nstill being deliv".encode()
    (root / "tmp" / "in-tmp").write_bytes(half)  # Maildir readers must leave tmp/ alone
    box.ignored.add(f"in-tmp@{DOMAIN}")
