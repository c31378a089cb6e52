#!/usr/bin/env python3
"""Build the second real evaluation mailbox: Drew Fossum's Enron mail as one gzipped mbox.

Source: the public Enron e-mail corpus (CMU maildir layout) as committed to GitHub in
``YusifAghalar/GraphAnalytics-ADA`` at commit ``1f53cefd8e4c09ac39f3bfd59d8431cb4ce06155``,
folder ``maildir/fossum-d/`` (4,796 message files in 7 folders). See ``data/eval/README.md``.

    python data/eval/build_fossum_d.py --source GIT_DIR --out fossum-d.mbox.gz
    python data/eval/build_fossum_d.py --tree CHECKOUT --out fossum-d.mbox.gz

``--source`` is a git directory (a bare mirror or a clone's ``.git``) that holds the commit
above; ``--tree`` is a checkout of it (a directory with ``maildir/fossum-d/`` in it). Write the
output outside the repository: it is real people's mail, and ``data/`` is bundled into the wheel.

The mbox is made the way ``../shared/eval/mail/skilling-j.mbox.gz`` was made (this recipe
rebuilds that file's 2,118 messages byte for byte from its own source folder):

* folders in name order, except the Notes views ``all_documents`` and ``discussion_threads``,
  which come last; files in name order within a folder;
* copies of one message (same Date, Subject and body text, whitespace at the ends ignored) are
  dropped: the first copy is kept, so the one from the more specific folder;
* each message is parsed and written back with Python's ``email`` package (compat32, headers
  unfolded: ``maxheaderlen=0``), line ends LF; headers otherwise as in the corpus;
* mboxrd: a body line that starts with ``From `` or ``>...From `` gets one more ``>``;
* the separator line is ``From <sender address> <Date in UTC, asctime>``; each message ends
  with a newline and is followed by one empty line;
* left out: every message to or from Kenneth Lay (any of his addresses or names in From, To,
  Cc, Bcc or their X- forms), and the company-wide notes that the corpus also holds in Lay's
  own mailbox (``LAY_K_COPIES``), so this set stays apart from ``lay-k``.

Python 3.11 standard library and ``git`` only; the output is the same bytes on every run.
"""

from __future__ import annotations

import argparse
import email.utils
import gzip
import hashlib
import io
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from email import message_from_bytes
from email.generator import BytesGenerator
from email.message import Message
from pathlib import Path

COMMIT = "1f53cefd8e4c09ac39f3bfd59d8431cb4ce06155"
CUSTODIAN = "fossum-d"
PREFIX = f"maildir/{CUSTODIAN}/"
GENERIC = ("all_documents", "discussion_threads")

ADDRESS_HEADERS = ("From", "To", "Cc", "Bcc", "X-From", "X-To", "X-cc", "X-bcc")
KEN_LAY = re.compile(
    r"kenneth[._]lay@|\bklay@|\bken\.lay@|CN=KLAY\b"
    r"|\bken(neth)?\s+(l\.?\s+)?lay\b|\blay,\s*ken(neth)?\b",
    re.IGNORECASE,
)
# Company-wide announcements in this folder whose Date, Subject and text also occur in lay-k.
LAY_K_COPIES = frozenset(
    {
        "5552805.1075842484432.JavaMail.evans@thyme",  # Organisational Change, 2000-11-30
        "9081647.1075842488967.JavaMail.evans@thyme",  # Enron Metals Update, 2000-11-10
    }
)


@dataclass(frozen=True)
class Mail:
    folder: str
    name: str
    raw: bytes  # the corpus file, line ends LF

    @property
    def message(self) -> Message:
        return message_from_bytes(self.raw)


def files_from_git(git_dir: Path) -> Iterator[tuple[str, bytes]]:
    """(path under the custodian, bytes) of every file at COMMIT, read with git."""
    listing = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", COMMIT, PREFIX],
        check=True,
        capture_output=True,
    ).stdout
    entries = [line.split(b"\t", 1) for line in listing.split(b"\0") if line]
    blobs = [(meta.split()[2].decode(), path.decode()) for meta, path in entries]
    batch = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
        input=b"".join(sha.encode() + b"\n" for sha, _ in blobs),
        check=True,
        capture_output=True,
    ).stdout
    pos = 0
    for _, path in blobs:
        header_end = batch.index(b"\n", pos)
        size = int(batch[pos:header_end].split()[2])
        yield path[len(PREFIX) :], batch[header_end + 1 : header_end + 1 + size]
        pos = header_end + 1 + size + 1


def files_from_tree(tree: Path) -> Iterator[tuple[str, bytes]]:
    root = tree / PREFIX
    for path in root.rglob("*"):
        if path.is_file():
            yield path.relative_to(root).as_posix(), path.read_bytes()


def corpus_mails(files: Iterator[tuple[str, bytes]]) -> list[Mail]:
    """Every message file in build order (see the module docstring); .DS_Store left out."""
    mails = []
    for rel, data in files:
        folder, _, name = rel.partition("/")
        if name and not rel.endswith(".DS_Store"):
            mails.append(Mail(folder, name, data.replace(b"\r\n", b"\n")))
    folders = sorted({m.folder for m in mails})
    rank = {f: i for i, f in enumerate([f for f in folders if f not in GENERIC] + list(GENERIC))}
    return sorted(mails, key=lambda m: (rank[m.folder], m.name))


def copy_key(mail: Mail) -> tuple[str | None, str | None, bytes]:
    msg = mail.message
    return msg["Date"], msg["Subject"], mail.raw.partition(b"\n\n")[2].strip()


def touches_ken_lay(msg: Message) -> bool:
    return bool(KEN_LAY.search(" ".join(str(msg[h] or "") for h in ADDRESS_HEADERS)))


def mbox_entry(mail: Mail) -> bytes:
    """One message as mboxrd: separator line, headers unfolded, escaped body, empty line."""
    msg = mail.message
    buf = io.BytesIO()
    BytesGenerator(buf, mangle_from_=False, maxheaderlen=0).flatten(msg)
    head, sep, body = buf.getvalue().partition(b"\n\n")
    lines = [b">" + line if re.match(rb">*From ", line) else line for line in body.split(b"\n")]
    text = head + sep + b"\n".join(lines)
    if not text.endswith(b"\n"):
        text += b"\n"
    return separator(msg) + text + b"\n"


def separator(msg: Message) -> bytes:
    """``From <sender address> <Date in UTC, as asctime writes it>``."""
    sender = email.utils.parseaddr(msg["From"])[1]
    when = email.utils.parsedate_to_datetime(msg["Date"]).timestamp()
    return f"From {sender} {time.asctime(time.gmtime(when))}\n".encode()


def select(mails: list[Mail]) -> tuple[list[Mail], Counter]:
    """The kept messages, and what was left out by reason."""
    seen: set[tuple] = set()
    kept: list[Mail] = []
    left_out: Counter = Counter()
    for mail in mails:
        key = copy_key(mail)
        if key in seen:
            left_out["copy of a kept message"] += 1
            continue
        seen.add(key)
        msg = mail.message
        if touches_ken_lay(msg):
            left_out["to or from Kenneth Lay"] += 1
        elif msg["Message-ID"].strip("<>") in LAY_K_COPIES:
            left_out["also in lay-k"] += 1
        else:
            kept.append(mail)
    return kept, left_out


def report(mails: list[Mail], kept: list[Mail], left_out: Counter, gz: bytes, out: Path) -> None:
    msgs = [m.message for m in kept]
    ids = [m["Message-ID"] for m in msgs]
    dates = sorted(email.utils.parsedate_to_datetime(m["Date"]) for m in msgs)
    years = Counter(d.year for d in dates)
    lines = [
        f"source files: {len(mails)} in {len({m.folder for m in mails})} folders",
        f"kept: {len(kept)} messages; left out: {dict(left_out)}",
        f"Message-IDs unique: {len(set(ids)) == len(ids)}",
        f"distinct senders (From): {len({email.utils.parseaddr(m['From'])[1] for m in msgs})}",
        f"dates: {dates[0]} .. {dates[-1]}; by year {dict(sorted(years.items()))}",
        f"folders: {Counter(m.folder for m in kept).most_common()}",
        f"{out}: {len(gz)} bytes, sha256 {hashlib.sha256(gz).hexdigest()}",
    ]
    print("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--source", type=Path, help="git dir holding commit " + COMMIT)
    where.add_argument("--tree", type=Path, help="a checkout of that commit")
    parser.add_argument("--out", type=Path, required=True, help="the .mbox.gz to write")
    args = parser.parse_args(argv)
    files = files_from_git(args.source) if args.source else files_from_tree(args.tree)
    mails = corpus_mails(files)
    kept, left_out = select(mails)
    mbox = b"".join(mbox_entry(m) for m in kept)
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as f:
        f.write(mbox)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(buf.getvalue())
    print(f"mbox: {len(mbox)} bytes unpacked")
    report(mails, kept, left_out, buf.getvalue(), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
