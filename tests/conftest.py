from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# the small model stays the test default: it writes, and no reader model unless a test asks
# for one (the reader's own tests load the 1.5B model, tests/assistant/answer/test_judge.py)
os.environ.setdefault("ASSISTANT_MODELS_READER", "none")
os.environ.setdefault("ASSISTANT_MODELS_WRITER", "smollm2-135m")

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data"


def real_1_5b() -> Path:
    """The shipped 1.5B model's file, for the tests of what only a real model shows: a missing
    part fails with the command that installs it (`make setup` does), and where free memory
    would give a smaller model the test is skipped, saying so."""
    from assistant.llm.model_file import LLMError
    from assistant.llm.models import reader_choice

    try:
        path, note = reader_choice("qwen2.5-coder-1.5b")
    except LLMError as exc:
        pytest.fail(str(exc))
    if path is None or "1.5b" not in path.name:
        pytest.skip(note)
    return path


# (subject, body) of mails several tests import, each worded once
KITCHEN = (
    "Kitchen start",
    "Bram's crew begins demolition of the kitchen on Monday 2 March at 8:00.",
)
BATTERY = (
    "Battery bug",
    "Priya found that the LoRa radio driver drains the battery in sleep mode.",
)
WEDDING = ("Wedding", "Elin's wedding is in Uppsala on 8 August; Maya gives the speech.")
TILES = ("Tiles", "We chose Mosa tiles, 15 x 15 cm, colour Warm Grey, for the kitchen.")


class FakeEmbedder:
    """Deterministic bag-of-words hashing into 64 dims: similar words, similar vectors."""

    name = "fake-hash-64"

    def __init__(self) -> None:
        self.calls = 0

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                h = int.from_bytes(hashlib.sha1(word.encode()).digest()[:4], "little")
                out[row, h % 64] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


def make_email(
    subject: str = "Hello",
    body: str = "Some text.",
    sender: str = "Bram de Vries <bram@example.nl>",
    to: str = "maya@lindqvist.me",
    msgid: str | None = None,
    when: datetime | None = None,
    charset: str = "utf-8",
    html: str | None = None,
    attachments: list[tuple[str, str, bytes]] | None = None,
    in_reply_to: str | None = None,
) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = subject
    msg["Date"] = format_datetime(when or datetime(2026, 3, 2, 9, 30, tzinfo=UTC))
    msg["Message-ID"] = msgid or make_msgid(domain="example.nl")
    if in_reply_to:
        msg["In-Reply-To"] = in_reply_to
        msg["References"] = in_reply_to
    if html is not None and body is None:
        msg.set_content(html, subtype="html", charset=charset)
    else:
        msg.set_content(body, charset=charset)
        if html is not None:
            msg.add_alternative(html, subtype="html")
    for name, ctype, payload in attachments or []:
        maintype, subtype = ctype.split("/")
        msg.add_attachment(payload, maintype=maintype, subtype=subtype, filename=name)
    return msg


def write_mbox(path: Path, messages: list[EmailMessage]) -> Path:
    with path.open("wb") as fh:
        for i, msg in enumerate(messages):
            stamp = (datetime(2026, 1, 1) + timedelta(days=i)).strftime("%a %b %d %H:%M:%S %Y")
            fh.write(f"From sender@example.nl {stamp}\n".encode())
            raw = msg.as_bytes().replace(b"\r\n", b"\n")
            lines = raw.split(b"\n")
            raw = b"\n".join(b">" + ln if ln.startswith(b"From ") else ln for ln in lines)
            fh.write(raw.rstrip(b"\n") + b"\n\n")
    return path


def import_mails(store, embedder, path: Path, mails: Sequence[tuple[str, str]], tag: str = "m"):
    """`mails` ((subject, body) pairs, Message-IDs <{tag}0@x>, <{tag}1@x>, ...) written to the mbox
    `path` and imported into `store` with `embedder`; the import's report."""
    from assistant.importing.importer import Importer

    msgs = [make_email(subject=s, body=b, msgid=f"<{tag}{i}@x>") for i, (s, b) in enumerate(mails)]
    return Importer(store, embedder).run([write_mbox(path, msgs)])


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    return FakeEmbedder()


def empty_store():
    """A KnowledgeStore on a fresh in-memory database."""
    from assistant.knowledge.db import open_db
    from assistant.knowledge.store import KnowledgeStore

    return KnowledgeStore(open_db(None))


@pytest.fixture
def store():
    return empty_store()


def load_qa() -> list[dict]:
    import json

    rows = []
    for name in ("mail_qa.jsonl", "notes_qa.jsonl"):
        with (DATA / "qa" / name).open(encoding="utf-8") as fh:
            rows += [json.loads(line) for line in fh if line.strip()]
    return rows


@pytest.fixture(scope="session")
def demo_context(tmp_path_factory):
    """The demo corpus imported once per test session with the real embedder."""
    from assistant.importing.importer import Importer
    from assistant.services import open_services

    ctx = open_services(tmp_path_factory.mktemp("demo-home"))
    report = Importer(ctx.store, ctx.embedder).run([DATA / "mail" / "demo.mbox", DATA / "notes"])
    assert report.errors == [] and report.seen > 150
    return ctx
