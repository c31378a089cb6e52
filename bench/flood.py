"""A write-in campaign as mail (issue 47): `count` nearly alike mails from as many different
senders, spread over the last week before `newest`, to add to a real mailbox. Each mail is one
of a few subject lines and the campaign's letter with its words varied the way such letters are
(the sender's name, town and role, a few swapped phrases, now and then a sentence of their
own): the shape of the campaign that filled a real mailbox's newest week with 2,256 mails from
2,256 senders. Written from a seed: the same arguments write the same mails.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime, parsedate_to_datetime
from pathlib import Path

FIRST = "Mary James Linda Robert Susan David Karen Thomas Nancy Daniel Betty Paul Helen".split()
LAST = "Smith Garcia Nguyen Patel Brown Miller Davis Lopez Wilson Moore Taylor Clark Hall".split()
TOWNS = ("Houston", "Austin", "Dallas", "Omaha", "Tulsa", "Sugar Land", "Katy", "Plano", "Tampa")
SUBJECTS = (
    "Protect our retirement savings",
    "Please protect our retirement savings",
    "A shareholder's request",
)
ROLE = ("a shareholder", "a long-time shareholder", "an employee", "a retiree", "an investor")
LETTER = (
    "Dear Mr. Skilling,\n\n"
    "I am writing to you as {role} of Enron Corp. from {town}. Like thousands of others I put "
    "a large part of my retirement savings into Enron stock, and in the last weeks I have "
    "watched those savings {lose} while the company told us that its business was strong. "
    "I {ask} you to speak openly about what you knew of the partnerships and the accounting "
    "before you left, to support the petition to unfreeze the employees' 401(k) accounts, and "
    "to return the proceeds of the stock you sold this year to a fund for the employees and "
    "retirees who have lost everything. {own}\n\n"
    "Families like mine trusted the leadership of this company. Please do the right thing "
    "and stand with the people who built Enron.\n\n"
    "Sincerely,\n{name}\n{town}"
)
LOSE = ("disappear", "melt away", "vanish", "fall to almost nothing")
ASK = ("urge", "ask", "respectfully ask", "call on")
OWN = (
    "My husband and I planned to retire next spring.",
    "I worked in the pipeline group for nineteen years.",
    "My daughter's college fund was in Enron stock.",
    "I have written to my congressman as well.",
    "We lost more than half of what we had saved.",
    "I still cannot believe how fast this happened.",
)


def flood(count: int, newest: datetime, seed: int = 47) -> Iterator[EmailMessage]:
    """`count` campaign mails, each from its own address, dated over the 7 days to `newest`."""
    rng = random.Random(seed)
    for n in range(count):
        name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        town = rng.choice(TOWNS)
        body = LETTER.format(
            role=rng.choice(ROLE), town=town, lose=rng.choice(LOSE), ask=rng.choice(ASK),
            own=rng.choice(OWN) if rng.random() < 0.3 else "", name=name,
        )  # fmt: skip
        msg = EmailMessage()
        msg["From"] = f"{name} <{name.lower().replace(' ', '.')}{n}@{rng.choice(DOMAINS)}>"
        msg["To"] = "jeff.skilling@enron.com"
        msg["Subject"] = rng.choice(SUBJECTS)
        msg["Date"] = format_datetime(newest - timedelta(seconds=rng.uniform(0, 7 * 86400)))
        msg["Message-ID"] = f"<{PREFIX}{seed}.{n}@campaign.example.org>"
        msg.set_content(body)
        yield msg


PREFIX = "flood."  # the campaign's Message-IDs start with it


def is_flood(message_id: str) -> bool:
    return message_id.strip("<").startswith(PREFIX)


DOMAINS = ("aol.com", "hotmail.com", "yahoo.com", "earthlink.net", "swbell.net", "msn.com")


def write_mbox(path: Path, count: int, newest: datetime, seed: int = 47) -> int:
    """Write the flood as an mbox at `path`; return how many mails."""
    with path.open("wb") as out:
        for msg in flood(count, newest, seed):
            when = parsedate_to_datetime(msg["Date"])
            out.write(f"From campaign {when:%a %b} {when.day:2d} {when:%H:%M:%S %Y}\n".encode())
            out.write(msg.as_bytes().replace(b"\nFrom ", b"\n>From "))
            out.write(b"\n")
    return count


def flooded_copy(home: Path, target: Path, count: int, newest: datetime, repo: Path) -> Path:
    """A copy of `home` (its knowledge bank and settings; no cache) at `target` with the flood
    imported by the app's own CLI (the checkout at `repo`), embedding included."""
    shutil.copytree(home, target, ignore=shutil.ignore_patterns("cache", "run", "logs"))
    mbox = target.parent / f"{target.name}-flood.mbox"
    write_mbox(mbox, count, newest)
    cmd = [sys.executable, "-m", "assistant.cli", "--home", str(target), "import", str(mbox)]
    subprocess.run(cmd, check=True, capture_output=True, cwd=repo)
    return target
