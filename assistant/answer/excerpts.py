"""What the reader judges of a line, and the KV of its prompt's opening kept in the KV tree.

An excerpt is shown to the reader header first: "Excerpt: (sender · date · subject) line …",
the mail's header as the answer shows it (a question may name the person or the day, which the
line leaves to the header: bench/results/reader_prompts_shown.json; header first judges as the
header after, bench/results/reader_prompts_mail_first.json). Its prompt is three segments after
the instruction, each tokenized on its own:

    "Excerpt: (header)" · " first line" · " other lines…\\nQuestion: …\\nIs the answer …?"

so that the first two are the same tokens whatever the question, and a night can keep their KV
as nodes of the KV tree, [instruction, header] and [instruction, header, line], under the
reader model's fingerprint: a verdict on a line of a covered mail then computes only the
question (bench/results/verdict_tokens.json: the header and the first line are 53 of the 120
tokens a verdict computes after the instruction). A node is used where its tokens are the
prompt's; a line longer than EXCERPT_CHARS is cut as the night cuts it, and a quote shown as
a window of a long line (answer/quoted.py) is computed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from assistant.answer.shape import mail_line, mail_of

if TYPE_CHECKING:
    from assistant.knowledge.store import ChunkRecord

EXCERPT_CHARS = 320


def flat(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True)
class Excerpt:
    """A quote's or a candidate's lines and its mail's header line (`where`, "" for none)."""

    where: str
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        """The lines as the reader reads them: one run of words, cut at EXCERPT_CHARS."""
        return flat(" ".join(self.lines))[:EXCERPT_CHARS]

    @property
    def first(self) -> str:
        """The first line as a night's node holds it (the text's head: its lines are joined
        with a space and cut where a lone first line is cut)."""
        return flat(self.lines[0])[:EXCERPT_CHARS] if self.lines else ""

    def __str__(self) -> str:
        return f"({self.where}) {self.text}" if self.where else self.text


def excerpt(lines: str | Sequence[str], record: ChunkRecord | None) -> Excerpt:
    """The excerpt of `lines` (one line or several of one mail) of `record`'s mail."""
    where = mail_line(mail_of(record)) if record is not None else ""
    return Excerpt(where, (lines,) if isinstance(lines, str) else tuple(lines))


def as_excerpt(item: str | Excerpt) -> Excerpt:
    """A plain string is an excerpt with no header (the reader's own tests, the studies)."""
    return item if isinstance(item, Excerpt) else Excerpt("", (item,))


@dataclass(frozen=True)
class Opening:
    """The segments of one verdict's prompt after the instruction: the excerpt's header, its
    first line (None when it has none) and the rest, with the question, the ask and the chat
    frame's tail."""

    header: str
    line: str | None
    rest: str


def opening(template: str, item: Excerpt, question: str, tail: str) -> Opening:
    """`template` ("Excerpt: {excerpt}\\nQuestion: {question}\\n…") split around the excerpt."""
    before, after = template.split("{excerpt}", 1)
    header = f"{before}({item.where})" if item.where else before.rstrip()
    first, text = item.first, item.text
    line = f" {first}" if first else None
    rest = text[len(first) :] if first else (f" {text}" if text else "")
    return Opening(header, line, rest + after.format(question=question) + tail)
