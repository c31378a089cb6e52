"""The mailbox of issue 17, generated: no blank line between messages, a 15 MB base64 attachment,
base64 and binary declared as text, a 20 kB header, a header-less message, garbage, a truncated
tail. Every valid message is stored once, nothing binary is indexed, a re-import adds nothing."""

from __future__ import annotations

import base64
import os
import random
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from assistant.importing.importer import Importer
from assistant.ingest.mbox import count_mbox
from tests.conftest import FakeEmbedder, make_email

STAMPS = (
    b"From maya@example.nl Thu Jan  1 00:00:00 2026\n",
    b"From 1738291283747@xxx Wed Feb 05 10:42:15 +0000 2025\n",  # Gmail Takeout
    b"From - Thu Jan 01 00:00:00 2026\n",  # Thunderbird
)


@dataclass
class Mailbox:
    path: Path
    valid: dict[str, str] = field(default_factory=dict)  # Message-ID → the body it must keep
    envelopes: int = 0
    errors: int = 0  # items the import must skip with an error

    def add(self, fh, raw: bytes, end: bytes = b"\n") -> None:
        """Append one message mboxrd-style, right after the previous one (no blank line)."""
        lines = raw.replace(b"\r\n", b"\n").split(b"\n")
        escaped = b"\n".join(b">" + ln if ln.startswith(b"From ") else ln for ln in lines)
        fh.write(STAMPS[self.envelopes % len(STAMPS)] + escaped.rstrip(b"\n") + end)
        self.envelopes += 1

    def mail(self, fh, msg_id: str, body: str, **kwargs) -> None:
        self.valid[msg_id] = body
        self.add(
            fh, make_email(subject=msg_id, body=body, msgid=f"<{msg_id}>", **kwargs).as_bytes()
        )


def _part(msg_id: str, body: bytes, ctype: str) -> bytes:
    head = f"From: a@example.nl\nSubject: {msg_id}\nMessage-ID: <{msg_id}>\nContent-Type: {ctype}\n"
    return head.encode() + b"\n" + body


def write_mailbox(path: Path, n_valid: int = 30, seed: int = 0) -> Mailbox:
    rng = random.Random(seed)
    box = Mailbox(path)
    with path.open("wb") as fh:
        for i in range(n_valid):
            box.mail(fh, f"v{i}@real.test", f"Valid mail {i}: the meeting moves to room {100 + i}.")
            if i == 5:
                _hostile(box, fh, rng)
        cut = make_email(subject="cut", body="The file ends in the middle of this sentence and")
        box.add(fh, cut.as_bytes()[:-25], end=b"")  # a truncated tail: headers and some text
    return box


def _hostile(box: Mailbox, fh, rng: random.Random) -> None:
    box.mail(
        fh,
        "huge@real.test",
        "The photos of the site, attached.",
        attachments=[("site.tar", "application/x-tar", rng.randbytes(15 << 20))],
    )
    pasted = "From the desk of Maya:\n\nthe tiles arrive Monday.\n\nFrom 9:00 on, bring tea."
    box.mail(fh, "from-lines@real.test", pasted)
    refs = " ".join(f"<ref{i}.{rng.getrandbits(64):x}@real.test>" for i in range(600))
    box.valid["long-header@real.test"] = "A mail with a 20 kB References header."
    msg = make_email(body=box.valid["long-header@real.test"], msgid="<long-header@real.test>")
    msg["References"] = refs
    assert len(refs) > 20_000
    box.add(fh, msg.as_bytes())
    # base64 and binary sent as text: the mail is kept, the noise never indexed
    blob = base64.encodebytes(rng.randbytes(2 << 20))
    box.valid["b64-as-text@real.test"] = ""
    box.add(fh, _part("b64-as-text@real.test", blob, "text/plain; charset=us-ascii"))
    box.valid["binary-as-text@real.test"] = ""
    box.add(fh, _part("binary-as-text@real.test", rng.randbytes(300_000), "text/plain"))
    box.add(fh, b"Just a line of text without any header.\nAnd another.")  # header-less
    box.add(fh, rng.randbytes(4096).replace(b":", b".").replace(b"\n", b" "))  # garbage
    box.errors += 2


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    from assistant.knowledge.db import open_db
    from assistant.knowledge.store import KnowledgeStore

    box = write_mailbox(tmp_path_factory.mktemp("real") / "real.mbox")
    store = KnowledgeStore(open_db(None))
    importer = Importer(store, FakeEmbedder())
    first = importer.run([box.path])
    version = store.version("chunks")
    os.utime(box.path, (1, 1))  # touched, not changed: read whole again, not skipped
    second = importer.run([box.path])
    assert store.version("chunks") == version
    return box, store, first, second


def test_every_envelope_is_a_message_and_every_valid_one_is_stored_once(imported):
    box, store, first, _ = imported
    assert count_mbox(box.path) == box.envelopes
    rows = store.db.execute("SELECT message_id, body FROM documents").fetchall()
    ids = [r[0] for r in rows]
    assert len(ids) == len(set(ids))
    assert box.valid.items() <= dict(rows).items()
    assert len(rows) == len(box.valid) + 1  # and the truncated tail
    assert len(first.errors) == box.errors
    assert all("not an email" in e.reason for e in first.errors)


def test_nothing_binary_is_indexed(imported):
    box, store, first, _ = imported
    chunks, tokens = store.db.execute("SELECT count(*), sum(token_count) FROM chunks").fetchone()
    assert chunks == len(box.valid) + 1  # one short chunk per message
    assert tokens < 60 * chunks
    largest = store.db.execute("SELECT max(length(body)) FROM documents").fetchone()[0]
    assert largest < 200
    reasons = " ".join(w.reason for w in first.warnings)
    assert "base64-like" in reasons and "binary data" in reasons and "truncated" in reasons


def test_reimport_adds_nothing(imported):
    box, store, first, second = imported
    assert (second.added, second.updated, second.chunks_added, second.embedded) == (0, 0, 0, 0)
    assert second.seen == first.seen and len(second.errors) == len(first.errors)
