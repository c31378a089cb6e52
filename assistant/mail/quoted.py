"""Text a mail repeats from an earlier mail of its thread: Lotus Notes and Outlook replies and
forwards carry the earlier mail in their own body, where ingest/quotes.py cannot tell it from new
text. Compared by line, whitespace and quote marks aside: a chunk made of such lines is not indexed
twice, and `assistant thread` folds them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

MIN_CHARS = 12  # shorter lines ("Thanks,", "Jeff") prove nothing
REPEAT_SHARE = 0.9  # a chunk this much made of earlier lines is a repeat
REPEAT_LINES = 3  # a chunk of fewer countable lines is no quote (a reply's "Thanks, see you")
_MARKS = re.compile(r"^[\s>|]+")


def norm_line(line: str) -> str:
    """The line as compared: no quote marks, one space between words, lowercase; '' when too
    short to count."""
    text = " ".join(_MARKS.sub("", line).lower().split())
    return text if len(text) >= MIN_CHARS else ""


def line_set(texts: Iterable[str]) -> set[str]:
    return {n for text in texts for line in text.splitlines() if (n := norm_line(line))}


def repeat_share(text: str, earlier: set[str]) -> tuple[float, int]:
    """(share of the text's countable lines found in `earlier`, how many lines count)."""
    lines = [n for line in text.splitlines() if (n := norm_line(line))]
    if not lines:
        return 0.0, 0
    return sum(n in earlier for n in lines) / len(lines), len(lines)


def repeated_chunks(mails: Sequence, chunks: Sequence[tuple[int, int, str]]) -> list[int]:
    """The ids of `chunks` (chunk id, document id, text) that repeat an earlier mail of
    `mails` (one thread, oldest first; .doc_id, .message_id, .body). A chunk's first line is
    its header line (ingest/chunking.py) and is not compared; copies of one mail (the same
    Message-ID) are not each other's earlier mails."""
    by_doc: dict[int, list[tuple[int, str]]] = {}
    for chunk_id, doc_id, text in chunks:
        by_doc.setdefault(doc_id, []).append((chunk_id, text))
    drop: list[int] = []
    for i, mail in enumerate(mails):
        earlier = line_set(m.body for m in mails[:i] if _other(m, mail))
        if not earlier:
            continue
        for chunk_id, text in by_doc.get(mail.doc_id, []):
            share, counted = repeat_share(text.split("\n", 1)[-1], earlier)
            if counted >= REPEAT_LINES and share >= REPEAT_SHARE:
                drop.append(chunk_id)
    return drop


def _other(a, b) -> bool:
    return not (a.message_id and a.message_id == b.message_id)


def fold(body: str, earlier: set[str], min_lines: int = 2) -> str:
    """`body` with each run of at least `min_lines` lines repeated from `earlier` replaced by
    one line saying how many were folded (blank and short lines inside a run belong to it)."""
    out: list[str] = []
    run: list[str] = []
    for line in body.splitlines():
        n = norm_line(line)
        if n in earlier or (not n and run):
            run.append(line)
            continue
        out += _folded(run, min_lines)
        run = []
        out.append(line)
    out += _folded(run, min_lines)
    return "\n".join(out).strip("\n")


def _folded(run: list[str], min_lines: int) -> list[str]:
    """The run folded into one line, the short lines after its last repeated one kept."""
    counted = [i for i, line in enumerate(run) if norm_line(line)]
    if len(counted) < min_lines:
        return run
    end = counted[-1] + 1
    note = f"  [… {len(counted)} lines quoted from an earlier mail of this thread]"
    return [note, *run[end:]]
