"""One question and its answer in the conversation, in the shape of answer/shape.py: the mail's
own line(s) first, the answer span in bold, the mail's sender · date · subject under them (a weak
quote is flagged first; "not found" lists the nearest mails instead); then at most one model
sentence, with its reason in words when it is marked (a quote the model's reading does not
confirm is flagged once the sentence is in); then the badge line. The quote is shown
once: no Evidence lines repeat it."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from assistant.answer import shape
from assistant.events import AnswerDone, QuestionRewritten, QuoteFound
from assistant.tui.widgets.sources import mail_line

STOPPING = "stopping…"  # the badge from Esc until the answer has stopped
# a question asked before anything is imported: the welcome above it has the two buttons
NOTHING_IMPORTED = (
    "Nothing is imported yet, so there is no mail or note to search. Load the demo or "
    "import your own mail with the buttons above (Ctrl+O opens Import), then ask again."
)

SPAN = "bold"  # the answer span inside the quote
# the lines under the question, in order; each hidden until it has something to show
LINES = ("rewrite", "flag", "quote", "mail", "also", "sentence", "reason")
REWRITE = "→ asked as: "  # a follow-up, as it was turned into a standalone question


def badge(done: AnswerDone) -> str:
    """QA-bank hit / KV tokens reused of total / time to the quote / total time, on one line."""
    t = done.timings
    cache = "QA-bank hit" if done.qa_hit else "QA-bank miss"
    kv = f"KV {done.kv_reused_tokens}/{done.prompt_tokens} reused"
    if done.kv_reuse != "exact":  # "KV 480/620 reused, any-order, 24 repaired"
        kv += f", {done.kv_reuse}, {done.kv_repaired} repaired"
    return f"{cache} · {kv} · quote {t.get('quote', 0.0):.2f} s · total {t.get('total', 0.0):.2f} s"


def quote_text(quote: QuoteFound) -> Text:
    """The quoted lines in quotation marks, every occurrence of the answer span in bold."""
    text = Text(shape.quoted(quote.lines))
    if quote.span:
        text.highlight_words([quote.span], style=SPAN)
    return text


def mail_text(mail: dict) -> str:
    """sender · date · subject of a mail dict, the sender by name."""
    return mail_line(mail.get("sender") or "", mail.get("date") or "", mail.get("subject"))


def source_line(mail: dict) -> str:
    """— sender · date · subject, under the quote."""
    return "— " + mail_text(mail)


def nearest_text(quote: QuoteFound) -> str:
    """For "not found": the nearest mails, one line each (shape.nearest_lines, senders by name)."""
    short = [{**m, "sender": mail_line(m.get("sender") or "", "", "")} for m in quote.nearest]
    return "\n".join(shape.nearest_lines(short))


def marked(done: AnswerDone) -> bool:
    """The sentence is shown marked: some term of it is not in the quoted lines."""
    return bool(done.sentence and done.unsupported)


def reason(done: AnswerDone) -> str:
    """Why a marked sentence is marked, in words: (“9 March” is not in the quoted mail)."""
    return shape.Sentence(done.sentence, tuple(done.unsupported)).reason()


class Turn(Vertical):
    """The quote arrives first (QuoteShown), the sentence once it is checked (AnswerFinished); the
    badge line shows the status until it is done."""

    def __init__(self, turn: int, question: str) -> None:
        super().__init__(id=f"turn-{turn}", classes="turn")
        self.turn = turn
        self.question = question
        self.quoted = False  # the quote (or "not found") is on screen
        self.verdict = ""  # the reader's verdict on it (answer/judge.py), once it came
        self.running = True

    def compose(self) -> ComposeResult:
        yield Static(f"› {self.question}", classes="question", markup=False)
        for name in LINES:
            yield Static("", classes=name, markup=False)
        yield Static("", classes="badge", markup=False)

    @property
    def text(self) -> str:
        """What the answer shows, as plain text (the lines under the question, not the badge)."""
        shown = [self.query_one(f".{name}", Static) for name in LINES]
        return "\n".join(str(line.content) for line in shown if line.display)

    def show_rewrite(self, rewritten: QuestionRewritten) -> None:
        """Above the answer: what a follow-up was turned into (assistant/mail/followup.py)."""
        self._show("rewrite", REWRITE + rewritten.standalone)

    def show_quote(self, quote: QuoteFound, verdict: str = "") -> None:
        """The quote, marked "checking…" while the reader judges it; shown again in place with
        the reader's `verdict` (another line, "not found", or its mark)."""
        self.quoted = True
        self.verdict = verdict or self.verdict
        for name in ("flag", "quote", "mail", "also"):
            self._hide(name)
        self.set_class(quote.band == "none", "not-found")
        if quote.band == "none":
            self._show("flag", shape.NOT_FOUND)
            if quote.nearest:
                self._show("mail", nearest_text(quote))
            return
        self._show("quote", quote_text(quote))
        self._show("mail", source_line(quote.mail))
        if quote.also:  # another mail's best lines, as the CLI shows them (senders by name)
            self._show("also", shape.also_text(quote.also, mail_text(quote.also_mail)))
        if (quote.checking and not verdict) or verdict == "unsure":  # the sentence decides
            self._show("flag", shape.CHECKING)

    def set_status(self, status: str) -> None:
        """The badge; once "stopping…" is shown, only the stop itself changes it (a status
        posted by a step that was under way reads as if Esc had been ignored)."""
        badge = self.query_one(".badge", Static)
        if self.running and str(badge.content) != STOPPING:
            badge.update(status)

    def finish(self, done: AnswerDone) -> None:
        if not self.quoted:  # no quote came before: the answer as the core wrote it
            self._show("quote", done.answer or "(no answer)")
        if done.sentence:
            self._show("sentence", done.sentence)
        if marked(done):
            self._show("reason", reason(done))
        if done.band == "weak":  # neither the reader nor the model's reading confirmed it
            self._show("flag", shape.WEAK)
        elif self.verdict == "unsure" and not done.not_found:  # the sentence decided: no mark
            self._hide("flag")
        self.set_class(not done.supported, "marked")
        self._end(badge(done))

    def _hide(self, name: str) -> None:
        self.query_one(f".{name}", Static).display = False

    def _show(self, name: str, content: str | Text) -> None:
        line = self.query_one(f".{name}", Static)
        line.update(content)
        line.display = True

    def stop(self, seconds: float) -> None:
        self._end(f"stopped after {seconds:.1f} s — not stored in the cache", "stopped")

    def nothing_imported(self) -> None:
        self._show("flag", NOTHING_IMPORTED)
        self._end("not asked: the knowledge bank is empty", "empty")

    def fail(self, error: str) -> None:
        self._end(f"error: {error}", "failed")

    def _end(self, line: str, state: str = "done") -> None:
        self.running = False
        self.add_class(state)
        self.query_one(".badge", Static).update(line)
