"""The answer as the user sees it: the mail's own line(s) first, with the mail's sender, date and
subject, then at most one short model sentence, shown only when every checkable term of it stands
in the quoted lines (answer/support.py); "Not found in your mail" with the nearest mails when no
line clears the bar (answer/evidence.py)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from assistant.answer.evidence import Evidence, Found, distinct_mails, mail_key
from assistant.answer.lines import BULLET, sentences_of
from assistant.answer.support import says_nothing, sentence_faults
from assistant.answer.text import asked_kinds, kind_terms
from assistant.clock import Clock
from assistant.events import AnswerDone, KVReused, QuoteFound
from assistant.knowledge.store import ChunkRecord

NOT_FOUND = "Not found in your mail."
NEAREST = "The nearest mails:"
WEAK = "Not confirmed: the model's own reading does not point to this line; it may not answer."
CHECKING = "checking…"
SENTENCE_CHARS = 240  # "one short sentence"


def mail_of(record: ChunkRecord | None) -> dict:
    """The quoted mail, as `ask --json` reports it."""
    if record is None:
        return {}
    return {
        "sender": record.sender or None,
        "date": (record.date or "")[:10] or None,
        "subject": record.title,
        "id": record.message_id or record.note_path or None,
        "chunk_id": record.chunk_id,
    }


def mail_line(mail: dict) -> str:
    """One line per mail (as mail_of gives it): sender · date · subject."""
    parts = (mail.get("sender") or "note", mail.get("date"), mail.get("subject"))
    return " · ".join(str(part) for part in parts if part)


def first_sentence(draft: str) -> str:
    """The model's first sentence, at most SENTENCE_CHARS (a longer one is no short sentence),
    split as the mail's lines are (lines.sentences_of: "Mr. Murdock" is not a sentence's
    end), without the list marker it may open with ("- Jim Hughes, COO")."""
    text = BULLET.sub("", " ".join(draft.split()))
    sentence = next(sentences_of(text), "") if text else ""
    return sentence if len(sentence) <= SENTENCE_CHARS else ""


@dataclass(frozen=True)
class Sentence:
    """The model's sentence as shown: `text` ("" when dropped), and the terms of it the quote
    does not hold. Marked (`faults` and a text): its terms stand in other lines of the prompt's
    mails, not in the quote; the sentence is shown with them named. Dropped: it says nothing,
    or something no mail of the prompt says."""

    text: str = ""
    faults: tuple[str, ...] = ()
    # the model's own reading points to the quote (shape.agrees)
    confirmed: bool = False

    @property
    def marked(self) -> bool:
        return bool(self.text and self.faults)

    def reason(self) -> str:
        return reason(self.faults)


def reason(faults: Sequence[str]) -> str:
    """Why a sentence is marked, in words: (“$1.2 billion” is not in the quoted mail)."""
    named = ", ".join(f"“{t}”" for t in faults[:3])
    verb = "is" if len(faults) == 1 else "are"
    return f"({named} {verb} not in the quoted mail)"


NO_SENTENCE = Sentence()


def checked_sentence(
    draft: str, found: Found, question: str, sources: Sequence[str] = ()
) -> tuple[Sentence, list[str]]:
    """(the sentence shown, what kept it from standing on the quote): the model's first
    sentence, plain when every checkable term of it stands in the quote (or the question);
    marked when some name, number or date of it does not but every one stands in `sources`
    (the prompt's chunks); dropped otherwise."""
    text = first_sentence(draft)
    if not text or found.not_found or says_nothing(text, question):
        return Sentence(), []
    lines = shown_lines(found)
    terms, words = sentence_faults(text, lines, question)
    faults = [*terms, *words]
    confirmed = agrees(text, lines, question, faults)
    if not faults:
        return Sentence(text, confirmed=confirmed), []
    if terms and sources and not any(sentence_faults(text, list(sources), question)):
        return Sentence(text, tuple(terms)), faults
    return Sentence(confirmed=confirmed), faults


def agrees(sentence: str, lines: Sequence[str], question: str, faults: Sequence[str]) -> bool:
    """The model's reading points to the quote: its sentence holds a term of the kind the
    question asks for that the quote holds too (a date of the quote for "when" …), whatever
    else it adds. When no kind is asked, only the sentence as a whole can point: every name,
    number, date and content word of it stands in the lines shown (`faults`, its terms and
    words, is empty). A sentence with nothing checkable in it ("the scorecard is a tool to
    evaluate a candidate") names nothing that could disagree, so it would confirm any quote:
    a sentence that is dropped for what it adds vouches for nothing (funnel_vacuous.json)."""
    kinds = asked_kinds(question) - {"place"}
    if not kinds:
        return not faults
    quoted = kind_terms(" ".join(lines), question, kinds)
    return bool(kind_terms(sentence, question, kinds) & quoted)


def final_band(found: Found, sentence: Sentence) -> str:
    """ "none" when nothing was found; otherwise "answer" when the model's reading confirms the
    quote, "weak" (shown marked) when it does not."""
    if found.not_found:
        return "none"
    if found.judged == "confirmed":  # the reader's verdict (answer/judge.py)
        return "answer"
    return "answer" if sentence.confirmed else "weak"


def shown_lines(found: Found) -> list[str]:
    """Every line shown for a found quote: its lines, its mail's sender · date · subject, and
    the other mail's line with its mail."""
    lines = [e.sentence for e in found.lines]
    if found.record is not None:
        lines.append(mail_line(mail_of(found.record)))
    if found.also and found.also_record is not None:
        lines += [*(e.sentence for e in found.also), mail_line(mail_of(found.also_record))]
    return lines


def also_text(lines: Sequence[Evidence], where: str) -> str:
    """The other mail's lines, under the quote: Also: “…” — `where` (sender · date · subject)."""
    return f"Also: “{' '.join(e.sentence for e in lines)}” — {where}"


def quoted(lines: Sequence[Evidence]) -> str:
    """The quote's lines as shown: one run of text in quotation marks."""
    return "“" + " ".join(e.sentence for e in lines) + "”"


def shown(found: Found, sentence: Sentence = NO_SENTENCE, band: str = "answer") -> str:
    """The whole text shown as the answer: for a found line, the quote, its mail line, then the
    sentence (a marked one with its reason), then, for a "weak" band, that the quote is not
    confirmed; otherwise "not found" and the nearest mails."""
    if found.not_found or found.record is None:
        return "\n".join([NOT_FOUND, *nearest_lines([mail_of(r) for r in found.nearest])])
    parts = [quoted(found.lines), f"— {mail_line(mail_of(found.record))}"]
    if found.also and found.also_record is not None:
        parts.append(also_text(found.also, mail_line(mail_of(found.also_record))))
    if sentence.text:
        parts.append(f"{sentence.text} {sentence.reason()}" if sentence.marked else sentence.text)
    return "\n".join([*parts, WEAK] if band == "weak" else parts)


def nearest_lines(mails: Sequence[dict]) -> list[str]:
    if not mails:
        return []
    return [NEAREST, *(f"- {mail_line(m)}" for m in mails[:3])]


def remembered(question: str, made: float) -> str:
    """What a served QA-bank hit says of itself: a remembered answer, when it was made, and the
    question it was made for."""
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(made)) if made else "an earlier day"
    return f"Remembered answer, made {when} for “{question}”"


def quote_found(found: Found, checking: bool = False) -> QuoteFound:
    """The quote as shown; `checking`: the reader judges it next (a scorer's "not found" too:
    the reader may find the answer in a candidate line)."""
    mail = mail_of(found.record) if not found.not_found else {}
    nearest = [mail_of(r) for r in found.nearest[:3]]
    band = "none" if found.not_found else "answer"  # whether it is confirmed comes later
    also_mail = mail_of(found.also_record) if found.also else {}
    return QuoteFound(
        list(found.lines), found.span, mail, band, found.score, nearest, found.also, also_mail,
        checking=checking and bool(found.ranked),
    )  # fmt: skip


def sources_of(records: Sequence[ChunkRecord], found: Found) -> list[dict]:
    """One source per mail, in the prompt's order: the quoted chunk for the quoted mail."""
    quoted = found.record
    key = mail_key(quoted) if quoted is not None and not found.not_found else None
    return [(quoted if mail_key(r) == key else r).ref() for r in distinct_mails(records)]


def answer_done(
    question: str,
    found: Found,
    records: Sequence[ChunkRecord],
    clock: Clock,
    draft: str = "",
    sentence: Sentence = NO_SENTENCE,
    faults: Sequence[str] = (),
    reused: KVReused | None = None,
) -> AnswerDone:
    """The answer's last event: what is shown for `found` and the model's checked `sentence`
    (with its `draft` and `faults`), from the prompt's `records`, and how much KV was reused."""
    reused = reused or KVReused(0, 0)
    band = final_band(found, sentence)
    return AnswerDone(
        question,
        shown(found, sentence, band),
        sources_of(records, found),
        False,
        reused.reused_tokens,
        reused.prompt_tokens,
        clock.done(),
        evidence=[*found.lines, *found.also],
        supported=band != "weak" and not sentence.marked,
        unsupported=list(sentence.faults if sentence.marked else faults),
        kv_reuse=reused.mode,
        kv_repaired=reused.repaired,
        drafted=draft if faults and not sentence.text else "",
        span=found.span,
        mail=mail_of(found.record) if not found.not_found else {},
        not_found=found.not_found,
        sentence=sentence.text,
        band=band,
    )
