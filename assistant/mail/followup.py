"""Follow-up questions: one that leans on the last turn ("and when?", "what did he say next?",
"how do I RSVP for it?") is turned into a standalone question from the last turn's question,
answer and sources, by rules: he/she/him/his/her become the last turn's person (a name of its
question, else the sender of its first source), and the last turn's key words are carried
("… (about: HEF launch party)"). Its retrieval then looks first in the last turn's threads
(`Focus`). The model is not asked: rules cover the follow-ups measured in
bench/results/followups.json."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from assistant.ingest.emails import display_name
from assistant.mail.person_names import UPPER, fold
from cache.words import STOPWORDS

PERSON = {"he", "him", "his", "she", "her", "hers", "himself", "herself"}
THING = {"it", "its", "they", "them", "their", "those", "these", "there"}
DEICTIC = {"that", "this"}  # a pronoun only where no noun follows ("is that about?")
OPENERS = ("and", "also", "but", "so", "then", "what about", "how about", "anything else")
LEANING_WORDS = {"else", "next", "again", "too", "either"}
SHORT = 3  # words: "and when?", "who else?", "why?"
THIN = 2  # content words: "how long is the ride?" names too little to stand alone
TOPIC_WORDS = 8
FOCUS_SOURCES = 1  # the last turn's first sources whose threads a follow-up looks in first
_WORD = re.compile(r"[^\W_][\w'’.@-]*[\w]|[^\W_]")  # letters of any script: Åsa, Tomás
_NAME_RUN = re.compile(rf"\b{UPPER}[\w'’-]+(?:\s+(?:{UPPER}\.\s+)?{UPPER}[\w'’-]+)*")
_ASKING = {"what", "when", "where", "who", "whom", "whose", "which", "why", "how", "did", "does",
           "do", "is", "are", "was", "were", "can", "could", "would", "will", "should", "per",
           "according", "want", "wanted", "ask", "asked", "tell", "told", "say", "said", "i", "me",
           "my", "we", "us", "our", "many", "much", "long"}  # fmt: skip
_NOT_NAMES = {"I", "What", "When", "Where", "Who", "Whom", "Whose", "Which", "Why", "How", "Did",
              "Does", "Do", "Is", "Are", "Was", "Were", "Can", "Could", "Would", "Will", "And",
              "The", "A", "An", "In", "On", "At", "For", "Per", "Please", "Also", "But", "So",
              "January", "February", "March", "April", "May", "June", "July", "August",
              "September", "October", "November", "December", "Monday", "Tuesday", "Wednesday",
              "Thursday", "Friday", "Saturday", "Sunday"}  # fmt: skip
_PARTICLES = {"back", "up", "again", "today", "yesterday", "tomorrow", "later", "last", "next",
              "first", "yet", "earlier", "once", "twice"}  # fmt: skip
_FOLLOWS_NOUN_FREE = {"is", "was", "about", "for", "to", "from", "with", "on", "in", "mean", "'s"}


@dataclass(frozen=True)
class Turn:
    """One question and answer of a conversation, as the next question may lean on it."""

    question: str  # as the user asked it
    standalone: str  # as it was answered
    answer: str = ""
    sources: Sequence[dict] = ()  # KnowledgeStore ChunkRecord.ref() dicts, prompt order


@dataclass(frozen=True)
class Rewrite:
    asked: str
    standalone: str
    because: tuple[str, ...] = ()  # what made it lean: "he → Mark Golden", "short", …
    focus: tuple[str, ...] = ()  # the last turn's threads, looked in first

    @property
    def changed(self) -> bool:
        return self.standalone != self.asked


@dataclass
class Conversation:
    """The turns so far; each question is rewritten against the last one."""

    turns: list[Turn] = field(default_factory=list)

    def rewrite(self, question: str) -> Rewrite:
        return rewrite(question, self.turns[-1] if self.turns else None)

    def add(self, turn: Turn) -> None:
        self.turns.append(turn)


def tokens(text: str) -> list[str]:
    return _WORD.findall(text)


def leaning(question: str) -> list[str]:
    """Why `question` leans on the last turn ([] when it stands alone)."""
    words = [w.lower() for w in tokens(question)]
    why = [w for w in words if w in PERSON | THING]
    why += [w for i, w in enumerate(words) if w in DEICTIC and _noun_free(words, i)]
    why += [w for w in words if w in LEANING_WORDS]
    low = " ".join(words)
    why += [f"starts with “{o}”" for o in OPENERS if low == o or low.startswith(o + " ")]
    if len(words) <= SHORT:
        why.append("short")
    elif len(content_words(question)) <= THIN:
        why.append("few words of its own")
    return list(dict.fromkeys(why))


def content_words(text: str) -> list[str]:
    """The words that say what a question is about (not how it asks)."""
    words = (w.lower().removesuffix("'s").removesuffix("’s") for w in tokens(text))
    return [w for w in words if w not in STOPWORDS and w not in _ASKING and len(w) > 1]


def _noun_free(words: list[str], i: int) -> bool:
    return i + 1 == len(words) or words[i + 1] in _FOLLOWS_NOUN_FREE


def rewrite(question: str, last: Turn | None) -> Rewrite:
    """The standalone question for `question` after `last` (unchanged when it does not lean)."""
    why = leaning(question) if last is not None else []
    if not why or last is None:
        return Rewrite(question, question)
    text, because = question.strip(), []
    name = person(last)
    if name and any(w in PERSON for w in why):
        text = _name_pronouns(text, name)
        because.append(f"he/she → {name}")
    topic = [w for w in topic_words(last) if w.lower() not in _lower_words(text)]
    if topic:
        text = f"{text.rstrip()} (about: {' '.join(topic)})"
        because.append("carries the last question's words")
    return Rewrite(question, text, tuple(why + because), focus_threads(last))


def _lower_words(text: str) -> set[str]:
    return {w.lower().removesuffix("'s").removesuffix("’s") for w in tokens(text)}


def person(last: Turn) -> str:
    """Who he/she is: a name of the last question (one its first source's sender bears first),
    else a name its answer adds to a who-question, else its first source's sender."""
    names = names_in(last.standalone)
    sender = display_name(last.sources[0].get("sender") or "") if last.sources else ""
    own = set(re.split(r"[\s._-]+", fold(sender.split("@", 1)[0])))  # no domain: no company
    for name in names:
        if own & {fold(part) for part in name.split()}:
            return name
    if last.standalone.lower().startswith(("who", "whose")) and last.answer:
        added = [n for n in names_in(last.answer) if n not in names]
        if added:
            return added[0]
    if names:
        return names[0]
    return _readable(sender)


def _readable(sender: str) -> str:
    """'jeff.skilling@enron.com' → 'Jeff Skilling'; a display name stays."""
    if "@" not in sender:
        return sender
    local = sender.split("@", 1)[0]
    return " ".join(part.capitalize() for part in re.split(r"[._]+", local) if part)


def names_in(text: str) -> list[str]:
    """Runs of capitalised words, question words and a sentence's first word aside."""
    found = []
    for match in _NAME_RUN.finditer(text):
        words = [w for w in match.group(0).split() if w not in _NOT_NAMES]
        name = " ".join(words).removesuffix("'s").removesuffix("’s")
        if name and name not in found:
            found.append(name)
    return found


def _name_pronouns(text: str, name: str) -> str:
    def swap(match: re.Match) -> str:
        word = match.group(0).lower()
        if word in {"his", "hers"}:
            return f"{name}'s"
        if word == "her":
            rest = text[match.end() :].split()
            follows = rest[0].strip("?.!,").lower() if rest else ""
            noun_free = not follows or follows in STOPWORDS or follows in _PARTICLES
            return name if noun_free else f"{name}'s"
        return name

    return re.sub(r"\b(he|him|his|she|her|hers|himself|herself)\b", swap, text, flags=re.I)


def topic_words(last: Turn) -> list[str]:
    """The last question's key words, in order: names and content words, at most TOPIC_WORDS."""
    out: list[str] = []
    for word in tokens(last.standalone.split(" (about:", 1)[0]):
        low = word.lower().removesuffix("'s").removesuffix("’s")
        if low in STOPWORDS or low in _ASKING or low in out or len(low) < 2:
            continue
        out.append(word.removesuffix("'s").removesuffix("’s"))
    carried = _about(last.standalone)
    return (out + [w for w in carried if w not in out])[:TOPIC_WORDS]


def _about(standalone: str) -> list[str]:
    """The words a rewritten question carried already (a third turn keeps the first's)."""
    if " (about: " not in standalone:
        return []
    return standalone.rsplit(" (about: ", 1)[1].rstrip(")?. ").split()


def focus_threads(last: Turn) -> tuple[str, ...]:
    threads = (s.get("thread") for s in last.sources[:FOCUS_SOURCES])
    return tuple(dict.fromkeys(t for t in threads if t))
