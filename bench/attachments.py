"""Peak memory of an import whose mbox holds large attachments (issue 35, item 2: peak RSS at most
700 MB for the whole import).

    python bench/attachments.py [--sizes 60,200] [--docx-mb 20] [--mails 20] [--out attachments]

Each case is an mbox of `--mails` small mails plus its large one(s), written under a temporary
folder, imported by `python -m assistant.cli --home H import BOX` in a child process of its own
(a fresh home: the encoder is loaded and every chunk embedded), whose peak resident memory is read
from os.wait4's rusage. Cases: no large attachment (the baseline: start-up and encoder); a
readable Word file of `--docx-mb` MB (its size in incompressible images: the file is opened by
python-docx); and for each of `--sizes`, an attachment of that many MB named .pdf (over the byte
cap: listed and warned, never decoded); then all of those in one mbox. Prints a table and writes
bench/results/attachments.json (or --out).
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"

# ruff: noqa: E402
import argparse
import io
import json
import multiprocessing
import subprocess
import sys
import tempfile
import time
import zipfile
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path

from _common import REPO, log, print_table, write_results

TARGET_MB = 700
Attached = tuple[str, str, bytes]  # file name, content type, bytes
_COLUMNS = ("mbox_mb", "peak_rss_mib", "seconds", "added", "warnings", "errors")
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def _mail(i: int, attachment: Attached | None = None) -> bytes:
    msg = EmailMessage()
    msg["From"] = "Bram de Vries <bram@example.nl>"
    msg["To"] = "maya@lindqvist.me"
    msg["Subject"] = f"Mail {i}"
    msg["Date"] = format_datetime(datetime(2026, 3, 1 + i % 28, 9, 30, tzinfo=UTC))
    msg["Message-ID"] = f"<bench-{i}@attachments>"
    msg.set_content(f"Mail {i}: the meeting about topic {i} moves to room {100 + i}.")
    if attachment:
        name, ctype, data = attachment
        maintype, subtype = ctype.split("/")
        msg.add_attachment(data, maintype=maintype, subtype=subtype, filename=name)
    return msg.as_bytes().replace(b"\r\n", b"\n")


def _docx(megabytes: int) -> bytes:
    """A Word file with a few paragraphs and `megabytes` MB of incompressible images."""
    import docx

    document = docx.Document()
    for i in range(20):
        document.add_paragraph(f"Paragraph {i} of the renovation report: the roof, the gutters.")
    out = io.BytesIO()
    document.save(out)
    with zipfile.ZipFile(out, "a", zipfile.ZIP_STORED) as zf:
        for i in range(megabytes):
            zf.writestr(f"word/media/image{i}.png", os.urandom(1 << 20))
    return out.getvalue()


def write_box(path: Path, mails: int, large: list[Attached]) -> int:
    """The mbox at `path`: `mails` small mails, then one mail per large attachment; its size."""
    with path.open("wb") as fh:
        for i in range(mails + len(large)):
            attachment = large[i - mails] if i >= mails else None
            fh.write(b"From bench@example.nl Thu Jan  1 00:00:00 2026\n")
            fh.write(_mail(i, attachment).rstrip(b"\n") + b"\n\n")
    return path.stat().st_size


def run_import(home: Path, box: Path) -> dict:
    """Import `box` into `home` in a child process: its peak RSS, wall time and report."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "assistant.cli", "--home", str(home), "import", "--json"]
    t0 = time.perf_counter()
    child = subprocess.Popen(
        [*cmd, str(box)], env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - t0
    report = json.loads(out) if child.returncode == 0 else {}
    return {
        "rc": child.returncode,
        "peak_rss_mib": usage.ru_maxrss / 1024,
        "seconds": seconds,
        "added": report.get("added"),
        "warnings": len(report.get("warnings", [])),
        "errors": len(report.get("errors", [])),
    }


def cases(sizes: list[int], docx_mb: int) -> dict[str, list[tuple[str, int]]]:
    """Case name → its large attachments, as (kind, MB)."""
    pdfs = [("pdf", mb) for mb in sizes]
    return {
        "no large attachment": [],
        f"docx {docx_mb} MB (read)": [("docx", docx_mb)],
        **{f"pdf {mb} MB": [("pdf", mb)] for mb in sizes},
        "all of them": [("docx", docx_mb), *pdfs],
    }


def write_case(path: Path, mails: int, large: list[tuple[str, int]]) -> int:
    """`write_box` with the attachments `large` names. Run in a process of its own: a child the
    bench then starts from a parent that grew while writing would have the parent's pages in its
    peak RSS (Linux keeps the high-water mark of the image before exec)."""
    made = [
        ("report.docx", DOCX, _docx(mb)) if kind == "docx"
        else (f"scan-{mb}mb.pdf", "application/pdf", os.urandom(mb << 20))
        for kind, mb in large
    ]  # fmt: skip
    return write_box(path, mails, made)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="60,200", help="MB of each large attachment")
    parser.add_argument("--docx-mb", type=int, default=20)
    parser.add_argument("--mails", type=int, default=20)
    parser.add_argument("--out", default="attachments")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    rows = {}
    with tempfile.TemporaryDirectory(prefix="bench-attachments-") as tmp:
        for name, large in cases(sizes, args.docx_mb).items():
            box = Path(tmp) / f"{len(rows)}.mbox"
            spawn = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(1, mp_context=spawn) as writer:
                box_mb = writer.submit(write_case, box, args.mails, large).result() / 1e6
            log(f"{name}: importing an mbox of {box_mb:,.0f} MB")
            rows[name] = {"mbox_mb": box_mb, **run_import(Path(tmp) / f"home{len(rows)}", box)}
            box.unlink()
    print_table(
        "Import peak memory with large attachments",
        ["case", "mbox MB", "peak RSS MiB", "seconds", "added", "warnings", "errors"],
        [(k, *(r[c] for c in _COLUMNS)) for k, r in rows.items()],
        note=f"target: peak RSS at most {TARGET_MB} MB for the whole import",
    )
    peak = max(r["peak_rss_mib"] for r in rows.values())
    data = {"cases": rows, "peak_rss_mib": peak, "target_mb": TARGET_MB}
    path = write_results(args.out, data, vars(args))
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
