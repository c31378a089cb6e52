"""The question sequence of bench/e2e.py: a question file, a spread subsample of it, and repeats of
earlier questions placed a few questions after them, so that a QA bank meets realistic repeats."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path


class QuestionFileError(ValueError):
    """A question file that cannot be used; the message names the file, the line and the fix."""


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    answer: str  # the reference answer
    must_contain: tuple[str, ...] = ()
    repeat_of: str | None = None  # the id of the earlier question this one asks again
    repeat_kind: str = ""  # repeat (same words) | reworded (a word or two) | paraphrase


def load_questions(path: Path) -> list[Question]:
    """One JSON object a line with `question` and `answer` (strings) and, optionally,
    `must_contain` (a list of strings) and `id`."""
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if line.strip():
            out.append(_question(_object(path, number, line), path, number))
    if not out:
        raise QuestionFileError(f"{path}: no questions; write one JSON object per line")
    return out


def _object(path: Path, number: int, line: str) -> dict:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise QuestionFileError(f"{path}:{number}: not JSON ({exc})") from exc
    if not isinstance(row, dict):
        raise QuestionFileError(f"{path}:{number}: expected a JSON object, got {row!r}")
    return row


def _question(row: dict, path: Path, number: int) -> Question:
    where = f"{path}:{number}"
    for key in ("question", "answer"):
        if not isinstance(row.get(key), str) or not row[key].strip():
            raise QuestionFileError(f"{where}: `{key}` must be a non-empty string")
    must = row.get("must_contain", [])
    if not isinstance(must, list) or not all(isinstance(m, str) for m in must):
        raise QuestionFileError(f"{where}: `must_contain` must be a list of strings")
    qid = str(row.get("id") or f"q{number}")
    return Question(qid, row["question"].strip(), row["answer"], tuple(must))


def load_repeats(path: Path, originals: Sequence[Question]) -> list[Question]:
    """Hand-written repeats (`of`: an original id, `question`, `kind`): each takes the reference
    answer of the question it repeats. Repeats of unknown ids are an error."""
    by_id = {q.id: q for q in originals}
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if not line.strip():
            continue
        row = _object(path, number, line)
        original = by_id.get(row.get("of"))
        if original is None:
            raise QuestionFileError(f"{path}:{number}: `of` names no question: {row.get('of')!r}")
        out.append(
            replace(
                original,
                id=f"{original.id}~{number}",
                question=row["question"],
                repeat_of=original.id,
                repeat_kind=row.get("kind", "paraphrase"),
            )
        )
    return out


def spread(questions: Sequence[Question], limit: int) -> list[Question]:
    """`limit` questions spread evenly over the list (every n-th), deterministic."""
    if limit <= 0 or limit >= len(questions):
        return list(questions)
    return list(questions[:: len(questions) // limit][:limit])


def build_sequence(
    base: Sequence[Question], repeats: Sequence[Question], gap: int = 6
) -> list[Question]:
    """`base` in order, each repeat placed `gap` questions after its original (or last);
    repeats of questions not in `base` are left out."""
    position = {q.id: i for i, q in enumerate(base)}
    due: dict[int, list[Question]] = defaultdict(list)
    for r in repeats:
        if r.repeat_of in position:
            due[min(position[r.repeat_of] + gap, len(base) - 1)].append(r)
    return [q for i, original in enumerate(base) for q in (original, *due[i])]
