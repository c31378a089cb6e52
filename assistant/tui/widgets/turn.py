"""One question and its answer in the conversation: under the answer, a warning when some of
its names, numbers or dates are in no source, its evidence sentences, and the badge line."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from assistant.tui.messages import AnswerFinished


def badge(done: AnswerFinished) -> str:
    """QA-bank hit / KV tokens reused of total / TTFT / total time, on one line."""
    t = done.timings
    cache = "QA-bank hit" if done.qa_hit else "QA-bank miss"
    kv = f"KV {done.kv_reused_tokens}/{done.prompt_tokens} reused"
    if done.kv_reuse != "exact":  # "KV 480/620 reused, any-order, 24 repaired"
        kv += f", {done.kv_reuse}, {done.kv_repaired} repaired"
    return f"{cache} · {kv} · TTFT {t.get('ttft', 0.0):.2f} s · total {t.get('total', 0.0):.2f} s"


def evidence_lines(done: AnswerFinished) -> Text:
    """One line per evidence sentence, each naming its source as the Sources panel numbers it."""
    text = Text()
    for i, e in enumerate(done.evidence):
        number = done.source_number(e.chunk_id)
        text.append("\n" if i else "")
        text.append("Evidence: ", style="bold")
        text.append(f"“{e.sentence}”", style="italic")
        text.append(f" [{number}]" if number else "", style="bold")
    return text


def unsupported_line(done: AnswerFinished) -> str:
    """The plain warning for an answer the sources do not back, with the terms not found; for
    a quote, that the model's own answer was not backed and what the mail says stands instead."""
    terms = f" ({', '.join(done.unsupported)})" if done.unsupported else ""
    if done.drafted:
        return f"⚠ the model's answer was not found in your mail{terms}: quoting your mail instead"
    return f"⚠ not found in your mail — check the sources{terms}"


class Turn(Vertical):
    """Answer text arrives piece by piece; the badge line shows the status until it is done."""

    def __init__(self, turn: int, question: str) -> None:
        super().__init__(id=f"turn-{turn}", classes="turn")
        self.turn = turn
        self.question = question
        self.text = ""
        self.running = True

    def compose(self) -> ComposeResult:
        yield Static(f"› {self.question}", classes="question", markup=False)
        yield Static("", classes="answer", markup=False)
        yield Static("", classes="unsupported", markup=False)
        yield Static("", classes="evidence", markup=False)
        yield Static("", classes="badge", markup=False)

    def append(self, text: str) -> None:
        self.text += text
        self.query_one(".answer", Static).update(self.text.lstrip())

    def set_status(self, status: str) -> None:
        if self.running:
            self.query_one(".badge", Static).update(status)

    def finish(self, done: AnswerFinished) -> None:
        if done.qa_hit or done.drafted or not self.text.strip():
            self.text = done.answer
            self.query_one(".answer", Static).update(done.answer or "(no answer)")
        if not done.supported or done.drafted:
            self._show(".unsupported", unsupported_line(done))
        if not done.supported:
            self.add_class("unsupported")
        if done.evidence:
            self._show(".evidence", evidence_lines(done))
        self._end(badge(done))

    def _show(self, selector: str, content: str | Text) -> None:
        line = self.query_one(selector, Static)
        line.update(content)
        line.display = True

    def stop(self, seconds: float) -> None:
        self._end(f"stopped after {seconds:.1f} s — not stored in the cache", "stopped")

    def fail(self, error: str) -> None:
        self._end(f"error: {error}", "failed")

    def _end(self, line: str, state: str = "done") -> None:
        self.running = False
        self.add_class(state)
        self.query_one(".badge", Static).update(line)
