"""Kept current (issue 35): the real mailbox re-imported with no path, unchanged and with 50
new mails appended, on a copy of an imported home; the wall time of each `assistant import`
(a whole CLI process) and what it added.

    python bench/sources.py --home H --mbox skilling-j.mbox [--new 50] [--out sources]

The first re-import reads the mbox whole (a home imported before sources were remembered); the
ones after it are what a night's re-import costs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from email.message import EmailMessage
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import log, print_table, write_results  # noqa: E402


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--mbox", type=Path, required=True)
    parser.add_argument("--new", type=int, default=50)
    parser.add_argument("--out", default="sources")
    return parser.parse_args()


def importing(home: Path, *paths: Path) -> tuple[dict, float]:
    cmd = [sys.executable, "-m", "assistant.cli", "--home", str(home), "import", "--json",
           *map(str, paths)]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(done.stdout), time.perf_counter() - start


def new_mail(n: int) -> bytes:
    out = []
    for i in range(n):
        msg = EmailMessage()
        msg["From"], msg["To"] = "New Sender <new@example.com>", "jeff.skilling@enron.com"
        msg["Subject"], msg["Message-ID"] = f"Appended {i}", f"<appended-{i}@bench>"
        msg["Date"] = "Tue, 20 Nov 2001 10:00:00 -0800"
        msg.set_content(f"Appended mail number {i}: the offsite moves to room {100 + i}.")
        out.append(b"From new@example.com Tue Nov 20 10:00:00 2001\n" + msg.as_bytes() + b"\n")
    return b"".join(out)


def main() -> None:
    args = parse_args()
    work = Path(tempfile.mkdtemp(prefix="sources-"))
    home, mbox = work / "home", work / args.mbox.name
    shutil.copytree(args.home, home, ignore=shutil.ignore_patterns("cache", "run"))
    shutil.copy2(args.mbox, mbox)
    rows = []
    first, t = importing(home, mbox)
    rows.append(["first re-import (read whole, sources remembered)", t, first["added"]])
    log(f"first: {t:.2f} s")
    unchanged, t = importing(home)
    rows.append(["unchanged, `import` with no path", t, unchanged["added"]])
    with mbox.open("ab") as fh:
        fh.write(new_mail(args.new))
    appended, t = importing(home)
    rows.append([f"{args.new} new mails appended", t, appended["added"]])
    print_table("Re-import of the real mailbox", ["run", "wall s", "added"], rows)
    params = {k: str(v) for k, v in vars(args).items()}
    write_results(args.out, {"runs": [dict(zip(("run", "wall_s", "added"), r, strict=True))
                                      for r in rows],
                             "unchanged": unchanged, "appended": appended}, params)  # fmt: skip


if __name__ == "__main__":
    main()
