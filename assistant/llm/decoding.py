"""Rules that stop a tiny model's loops without stopping it from copying the context.

A repetition penalty over the whole window penalises the names and numbers the answer must copy
from the prompt; these rules look at the answer's own tokens only. An n-gram of the answer that
occurs a second time is a loop ("She said that the test was a failure. She said that the test
was a failure."); n-grams of digits and punctuation alone are exempt, so "1,000,000" or
"100000" are copied whole.

Modes (values, not flags):
- "ban": the token that would repeat an n-gram is never chosen (no-repeat n-gram decoding);
- "stop": the answer ends where a repeated n-gram would begin (nothing of it is shown);
- "off": only the exact-period loop check of the answer path (is_looping, below).
Both are deterministic, so cached and uncached runs still agree token for token.

`answer_steps` is the answer's decode loop under these rules: it draws the tokens, applies the
rules and turns tokens into text, so the caller (prompt_cache) makes one call per answer and
gets back, a token at a time, only what it shows.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

REPEAT_MODES = ("ban", "stop", "off")


class RepeatGuard:
    def __init__(self, mode: str, n: int, is_word: Callable[[int], bool]) -> None:
        if mode not in REPEAT_MODES:
            raise ValueError(f"repeat guard: expected one of {REPEAT_MODES}, got {mode!r}")
        self.mode, self.n, self.is_word = mode, n, is_word

    @property
    def holds_back(self) -> int:
        """Tokens kept from the screen until they are known not to start a repeat."""
        return self.n - 1 if self.mode == "stop" else 0

    def banned(self, tokens: Sequence[int]) -> set[int]:
        """The next tokens that would complete an n-gram the answer already holds ("ban")."""
        if self.mode != "ban" or len(tokens) < self.n - 1:
            return set()
        key = list(tokens[len(tokens) - self.n + 1 :])
        return {
            tokens[i + self.n - 1]
            for i in range(len(tokens) - self.n + 1)
            if list(tokens[i : i + self.n - 1]) == key
            and self._counts([*key, tokens[i + self.n - 1]])
        }

    def repeated(self, tokens: Sequence[int]) -> bool:
        """The last n tokens occurred earlier in the answer ("stop")."""
        if self.mode != "stop" or len(tokens) < self.n + 1:
            return False
        tail = list(tokens[-self.n :])
        if not self._counts(tail):
            return False
        return any(list(tokens[i : i + self.n]) == tail for i in range(len(tokens) - self.n))

    def _counts(self, gram: Sequence[int]) -> bool:
        return any(self.is_word(t) for t in gram)


# a full stop after these (lower case, without it) ends no sentence: the model's, as it streams,
# and a mail's lines (answer/lines.py)
ABBREVIATIONS = frozenset(
    "e.g i.e etc approx ca incl excl vs dr mr mrs ms st jr sr prof resp cf est dept inc ltd "
    "corp co a.m p.m jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu "
    "thur fri sat sun vol ref bijv o.a z.b d.h usw tel fig".split()
)
BEFORE_NUMBER = frozenset("no nr nos p pp art".split())  # "no. 5", but "I said no. Then"
# a sentence ends at . ! ? (not after a known abbreviation or a lone letter: "e.g.", "J.")
# followed by white space, or at a line break after some text
_END = re.compile(r"(?<=[.!?])[\"'”)\]]?\s|\n")


def sentences_ended(text: str) -> int:
    """How many sentences (or lines) of `text` are complete."""
    count, text = 0, text.lstrip()
    for match in _END.finditer(text):
        before = text[: match.start()].rstrip("\"'”)]")
        if not before.strip() or before.endswith("\n"):
            continue
        word = re.split(r"[\s(]", before[:-1])[-1].lower() if before[-1] in ".!?" else ""
        if word in ABBREVIATIONS or word in BEFORE_NUMBER or (len(word) == 1 and word.isalpha()):
            continue
        count += 1
    return count


def is_looping(tokens: list[int], longest: int = 16) -> bool:
    """True when the tail is one span of 1..`longest` tokens repeated (3 times; short spans more,
    as digits are single tokens: "10000" is not a loop): a small model stuck in a loop.
    Stopping there is deterministic, so cached and uncached runs agree."""
    for period in range(1, longest + 1):
        repeats = {1: 8, 2: 5}.get(period, 3)
        if len(tokens) < period * repeats:
            continue
        tail = tokens[-period:]
        if all(
            tokens[-period * (i + 1) : len(tokens) - period * i] == tail for i in range(repeats)
        ):
            return True
    return False


def log_softmax_of(logits: np.ndarray, tokens: Sequence[int]) -> np.ndarray:
    """log p(tokens[i]) under row i of `logits` (rows × vocabulary), in float64."""
    logits = logits.astype(np.float64)
    top = logits.max(axis=1, keepdims=True)
    log_z = top[:, 0] + np.log(np.exp(logits - top).sum(axis=1))
    return logits[np.arange(len(logits)), np.asarray(tokens)] - log_z


def pick(
    logits: np.ndarray, banned: Callable[[list[int]], set[int]] | None, tokens: list[int]
) -> int:
    """The most likely token that `banned(tokens so far)` allows (`logits` is changed)."""
    for ban in banned(tokens) if banned else ():
        logits[ban] = -np.inf
    return int(np.argmax(logits))


Banned = Callable[[Sequence[int]], set[int]]
TokenSource = Callable[[int, Banned], Iterator[int]]


@dataclass(frozen=True)
class Step:
    """One token of the answer (None: the last step, which shows what was held back), the text
    it lets the screen show (a held-back token shows later, a character split over tokens when
    whole), and why the answer ends with it: "loop", "repeat", "sentences", "max_tokens",
    "end" (an end token or a full context); None while it goes on."""

    token: int | None
    texts: tuple[str, ...] = ()
    stop: str | None = None


def holds_letter(piece: bytes) -> bool:
    """A token's text holds a letter (not only digits, spaces or punctuation)."""
    return any(c.isalpha() for c in piece.decode("utf-8", "replace"))


def answer_steps(
    tokens_of: TokenSource,
    detokenize: Callable[[Sequence[int]], bytes],
    guard: tuple[str, int],
    max_tokens: int,
    sentences: int = 0,
) -> Iterator[Step]:
    """The answer from `tokens_of(max_tokens, banned)` (greedy or context-aware), a Step a
    token, under the exact-loop check and the repeat guard (`guard` = (mode, n)): in "stop"
    mode the last n-1 tokens are held back until they are known not to begin a repeat (then
    they are dropped); up to `sentences` complete sentences shown (0: no limit)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    words: dict[int, bool] = {}
    rules = RepeatGuard(*guard, words.__getitem__)
    tokens: list[int] = []
    pieces: list[bytes] = []
    said: list[str] = []
    shown = 0

    def show(upto: int) -> tuple[tuple[str, ...], bool]:
        """The text of the tokens not shown yet, up to `upto`; True where it ends the answer."""
        nonlocal shown
        texts: list[str] = []
        while shown < upto:
            text = decoder.decode(pieces[shown])
            shown += 1
            if text:
                texts.append(text)
                said.append(text)
                if sentences and sentences_ended("".join(said)) >= sentences:
                    return tuple(texts), True
        return tuple(texts), False

    for token in tokens_of(max_tokens, rules.banned):
        pieces.append(detokenize([token]))
        words.setdefault(token, holds_letter(pieces[-1]))
        tokens.append(token)
        stop = "loop" if is_looping(tokens) else "repeat" if rules.repeated(tokens) else None
        if stop:
            yield Step(token, stop=stop)
            return
        texts, ended = show(len(tokens) - rules.holds_back)
        yield Step(token, texts, "sentences" if ended else None)
        if ended:
            return
    texts, ended = show(len(tokens))
    yield Step(None, texts, "sentences" if ended else _why_ended(len(tokens), max_tokens))


def _why_ended(n_tokens: int, max_tokens: int) -> str:
    return "max_tokens" if n_tokens >= max_tokens else "end"
