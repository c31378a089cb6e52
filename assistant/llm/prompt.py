"""The answer prompt as token segments: [system] [chunk 1] … [chunk n] [question].

The chat template from the GGUF metadata is rendered once with placeholders and cut into the text
before the system content, between system and user content, and after the user content; a model
without a template (a base model) gets a plain "Question:/Answer:" frame.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from assistant.llm.runtime import LocalLLM

_SYS, _USER = "\x00SYSTEM\x00", "\x00USER\x00"


@dataclass(frozen=True)
class Frame:
    head: str  # before the system text
    middle: str  # after the context, before the question
    tail: str  # after the question, where the answer starts


@dataclass(frozen=True)
class Segments:
    system: list[int]
    chunks: list[list[int]]
    question: list[int]
    # the evidence lines, between the last chunk and the question: computed per question, so
    # never cached; the chunk segments before it stay reusable
    evidence: list[int] = field(default_factory=list)

    @property
    def prefix(self) -> list[list[int]]:
        return [self.system, *self.chunks]

    @property
    def total(self) -> int:
        return sum(len(s) for s in self.prefix) + len(self.evidence) + len(self.question)


def chat_frame(llm: LocalLLM) -> Frame:
    if not llm.chat_template:
        return Frame("", "\n\nQuestion: ", "\nAnswer:")
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    eos = llm.detokenize([llm.eos]).decode("utf-8", "replace")
    formatter = Jinja2ChatFormatter(llm.chat_template, eos_token=eos, bos_token="")
    messages = [{"role": "system", "content": _SYS}, {"role": "user", "content": _USER}]
    text = formatter(messages=messages).prompt
    head, rest = text.split(_SYS, 1)
    middle, tail = rest.split(_USER, 1)
    return Frame(head, middle, tail)


EVIDENCE_HEAD = "The lines that best match the question:\n"


def build_segments(
    llm: LocalLLM,
    frame: Frame,
    system: str,
    chunks: list[list[int]],
    question: str,
    evidence: Sequence[str] = (),
    evidence_place: str = "context",
) -> Segments:
    """The prompt's segments. The evidence lines go after the last chunk ("context") or after
    the question, in the user's turn ("question"); either way they are computed per question
    and the chunk segments before them stay reusable. `chunks`: each chunk's segment tokens
    (`chunk_segment`), tokenised by the caller, which may remember them from an earlier
    prompt (a callback for them would have this module call back up into its caller)."""
    lines = evidence_text(evidence)
    asked = question.strip()
    if lines and evidence_place == "question":
        asked, lines = f"{asked}\n\n{lines.rstrip()}", ""
    return Segments(
        system=llm.tokenize(frame.head + system, first=True),
        chunks=list(chunks),
        question=llm.tokenize(f"{frame.middle}{asked}{frame.tail}"),
        evidence=llm.tokenize(lines) if lines else [],
    )


def chunk_segment(llm: LocalLLM, text: str) -> list[int]:
    """A chunk's tokens as a prompt segment."""
    return llm.tokenize(f"{text.strip()}\n\n")


def evidence_text(evidence: Sequence[str]) -> str:
    """The evidence segment's text ("" without evidence): a heading, then a line each."""
    if not evidence:
        return ""
    return EVIDENCE_HEAD + "".join(f"- {' '.join(s.split())}\n" for s in evidence)
