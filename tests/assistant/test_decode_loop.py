"""The answer's decode loop with a scripted model: which pieces are shown, where the answer
stops (loop, repeated n-gram, held-back tokens, sentence limit, max tokens) and when the
pre-emption check runs. Pinned before the loop moved from prompt_cache into llm/."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence

import pytest

from assistant.clock import Clock
from assistant.config import Settings
from assistant.events import TokenStreamed
from assistant.kv.prompt_cache import Preempted, PromptCache
from assistant.llm.prompt import Segments

PIECES = {
    1: b"The",
    2: b" tiles",
    3: b" are",
    4: b" made",
    5: b" of",
    6: b" clay",
    7: b".",
    8: b" \xc3",  # " é" split over two tokens
    9: b"\xa9",
    10: b"1",
    11: b"0",
    12: b"\n",
}


class ScriptedLLM:
    """Says `script`, token by token, except where `banned` forbids a token (then the next one
    of the script that is allowed)."""

    def __init__(self, script: Sequence[int]) -> None:
        self.script = list(script)
        self.lock = threading.RLock()
        self.n_past = 0
        self.bans: list[set[int]] = []

    def greedy(self, max_tokens: int, banned: Callable | None = None) -> Iterator[int]:
        tokens: list[int] = []
        script = list(self.script)
        while script and len(tokens) < max_tokens:
            ban = banned(tokens) if banned else set()
            self.bans.append(ban)
            token = next((t for t in script if t not in ban), None)
            if token is None:
                return
            script.remove(token)
            tokens.append(token)
            yield token

    def detokenize(self, tokens: Sequence[int]) -> bytes:
        return b"".join(PIECES[t] for t in tokens)

    def reset(self) -> None:
        self.n_past = 0

    def eval(self, tokens: Sequence[int]) -> None:
        self.n_past += len(tokens)


def cache_over(llm: ScriptedLLM, guard: str = "stop", ngram: int = 4) -> PromptCache:
    settings = Settings()
    settings.answer.repeat_guard, settings.answer.repeat_ngram = guard, ngram
    settings.answer.decoding = "greedy"
    return PromptCache(settings, llm, None, "", None)  # type: ignore[arg-type]


class Checks:
    def __init__(self, preempt_at: int | None = None) -> None:
        self.n, self.preempt_at = 0, preempt_at

    def __call__(self) -> None:
        self.n += 1
        if self.n == self.preempt_at:
            raise Preempted


SENTENCE = [1, 2, 3, 4, 5, 6, 7]  # "The tiles are made of clay."


def test_stop_mode_drops_the_repeat_and_its_held_back_start():
    llm = ScriptedLLM([*SENTENCE, 1, 2, 3, 4, 5])
    check = Checks()
    pieces = list(cache_over(llm).decode(50, check))
    assert pieces == ["The", " tiles", " are", " made", " of", " clay", "."]
    assert check.n == 10  # after each token but the one that repeats


def test_held_back_tokens_are_shown_when_the_model_stops():
    llm = ScriptedLLM([1, 2, 10, 11, 11, 11, 11])
    check = Checks()
    pieces = list(cache_over(llm).decode(50, check))
    assert pieces == ["The", " tiles", "1", "0", "0", "0", "0"]
    assert check.n == 7


def test_max_tokens_ends_the_answer_and_flushes_it():
    llm = ScriptedLLM(SENTENCE)
    check = Checks()
    assert list(cache_over(llm).decode(4, check)) == ["The", " tiles", " are", " made"]
    assert check.n == 4


def test_an_exact_loop_stops_with_the_guard_off():
    llm = ScriptedLLM([1] + [6] * 12)
    check = Checks()
    pieces = list(cache_over(llm, "off").decode(50, check))
    assert pieces == ["The"] + [" clay"] * 7  # the 8th " clay" makes the loop
    assert check.n == 8


def test_ban_mode_skips_the_token_that_would_repeat_an_ngram():
    llm = ScriptedLLM([*SENTENCE, 1, 2, 3, 4, 6])
    pieces = list(cache_over(llm, "ban").decode(50, Checks()))
    assert "".join(pieces) == "The tiles are made of clay.The tiles are clay made"
    assert {4} in llm.bans


def test_a_character_split_over_tokens_is_shown_whole_once_complete():
    llm = ScriptedLLM([1, 8, 9, 7])
    pieces = list(cache_over(llm, "off").decode(50, Checks()))
    assert pieces == ["The", " ", "é", "."]  # nothing shown of an incomplete character


def test_a_background_check_stops_the_decode():
    llm = ScriptedLLM(SENTENCE)
    with pytest.raises(Preempted):
        list(cache_over(llm, "off").decode(50, Checks(preempt_at=3)))


def test_the_first_token_marks_ttft():
    llm = ScriptedLLM(SENTENCE)
    clock = Clock()
    list(cache_over(llm).decode(50, Checks(), clock))
    assert "ttft" in clock.times
    clock = Clock()
    list(cache_over(ScriptedLLM([])).decode(50, Checks(), clock))
    assert "ttft" not in clock.times


def stream(llm: ScriptedLLM, sentences: int | None, check: Checks) -> list[str]:
    cache = cache_over(llm)
    segments = Segments([0], [[0, 0]], [0])
    events = cache.stream("q", segments, False, check, Clock(), sentences)
    return [e.text for e in events if isinstance(e, TokenStreamed)]


def test_the_stream_ends_after_its_sentences_without_a_last_check():
    two = [*SENTENCE, 12, 1, 2, 7, 12, 1, 6]
    check = Checks()
    assert stream(ScriptedLLM(two), 1, check) == ["The", " tiles", " are", " made", " of",
                                                  " clay", ".", "\n"]  # fmt: skip
    # a check per prefill piece (3), then after each token (held back 3) before "\n" shows
    assert check.n == 3 + 10
    check = Checks()
    text = "".join(stream(ScriptedLLM(two), 2, check))
    assert text == "The tiles are made of clay.\nThe tiles.\n" and check.n == 3 + 14
    check = Checks()
    text = "".join(stream(ScriptedLLM(two), 0, check))
    assert text == "The tiles are made of clay.\nThe tiles.\nThe clay" and check.n == 3 + 14
