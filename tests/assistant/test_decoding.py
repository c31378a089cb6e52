"""The repeat guard and the answer's length: loops are cut, copying is not."""

from __future__ import annotations

import re

import pytest

from assistant.answer.answerer import NO_CACHE
from assistant.llm.decoding import RepeatGuard, is_looping, sentences_ended

WORDS = {1: "the", 2: " tiles", 3: " are", 4: " made", 5: " of", 6: " clay", 7: "."}
DIGITS = {10: "1", 11: "0", 12: ",", 13: "€"}


def is_word(token: int) -> bool:
    return any(c.isalpha() for c in {**WORDS, **DIGITS}[token])


def test_ban_names_the_token_that_would_repeat_an_ngram():
    guard = RepeatGuard("ban", 4, is_word)
    said = [1, 2, 3, 4, 5, 6, 7, 1, 2, 3]
    assert guard.banned(said) == {4}
    assert guard.banned([1, 2, 3, 4, 5, 6]) == set()


def test_digit_runs_are_never_banned_or_stopped():
    """'1,000,000' repeats the 4-gram ',000' and '100000' repeats '0000': both are copied."""
    million = [13, 10, 12, 11, 11, 11, 12, 11, 11, 11]
    assert RepeatGuard("ban", 4, is_word).banned(million[:-1]) == set()
    assert not RepeatGuard("stop", 4, is_word).repeated(million)
    assert not RepeatGuard("stop", 4, is_word).repeated([10, 11, 11, 11, 11, 11, 11])


def test_stop_fires_on_the_first_repeated_ngram_and_holds_back_its_start():
    guard = RepeatGuard("stop", 4, is_word)
    said = [1, 2, 3, 4, 5, 6, 7, 1, 2, 3]
    assert not guard.repeated(said)
    assert guard.repeated([*said, 4])
    assert guard.holds_back == 3 and RepeatGuard("ban", 4, is_word).holds_back == 0


def test_off_does_nothing_and_unknown_modes_are_refused():
    guard = RepeatGuard("off", 4, is_word)
    looped = [1, 2, 3, 4] * 3
    assert guard.banned(looped) == set() and not guard.repeated(looped)
    with pytest.raises(ValueError):
        RepeatGuard("penalty", 4, is_word)


@pytest.mark.parametrize(
    ("text", "ended"),
    [
        ("It moved to 23 June. Then", 1),
        ("Bring e.g. the PPK2. ", 1),
        ("Paid € 4.275,00 on 5 June.\n", 1),
        ("line one\nline two\n", 2),
        ("v3.2 is out", 0),
        ("J. Smith signed. Then", 1),
        ("He leaves as of Aug. 15th. Then", 1),
        ("Call Mr. Murdock at 5 p.m. Then", 0),
        ("\n\nHello.", 0),
    ],
)
def test_sentences_ended(text, ended):
    assert sentences_ended(text) == ended


def repeated_ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    words = re.findall(r"\w[\w-]*", text.lower())
    grams = [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]
    return {g for g in grams if grams.count(g) > 1}


def drafted(pipe, question: str) -> str:
    """The model's draft over the question's prompt chunks, no evidence lines, decoded under
    [answer] max_sentences (the answer path itself asks for one sentence)."""
    vector = pipe.embedder.embed_batch([question])[0]
    texts = [h.record.text for h in pipe.select(question, vector)]
    segments = pipe.cache.segments(texts, question)
    return pipe.cache.draft(question, segments, kv=False, background=False)


@pytest.mark.slow
def test_a_looped_answer_is_cut_and_a_plain_one_is_not(tmp_path, fake_embedder):
    """The shipped SmolLM2 loops on this question with no guard; both guards stop the loop,
    and an answer that copies its mail is the same under every mode."""
    from assistant.config import Settings
    from assistant.llm import make_llm
    from tests.assistant.test_pipeline import build

    pipe = build(tmp_path, make_llm(Settings().llm), fake_embedder, threshold=2.0)
    pipe.settings.answer.max_tokens, pipe.settings.answer.max_sentences = 80, 0
    pipe.settings.answer.repeat_ngram = 4  # no repeated 4-token span: no repeated 6 words
    answers = {}
    for mode in ("off", "ban", "stop"):
        pipe.settings.answer.repeat_guard = mode
        answers[mode] = {
            q: drafted(pipe, q) for q in ("Tell me about the tiles.", "What about the wedding?")
        }
    looped = answers["off"]["Tell me about the tiles."]
    assert repeated_ngrams(looped, 6)
    for mode in ("ban", "stop"):
        assert not repeated_ngrams(answers[mode]["Tell me about the tiles."], 6)
    assert looped.startswith(answers["stop"]["Tell me about the tiles."].strip())
    copied = {a["What about the wedding?"] for a in answers.values()}
    assert len(copied) == 1 and re.search(r"8 August", copied.pop())


@pytest.mark.slow
def test_answer_ends_after_max_sentences(tmp_path, fake_embedder):
    from assistant.config import Settings
    from assistant.llm import make_llm
    from tests.assistant.test_pipeline import build

    pipe = build(tmp_path, make_llm(Settings().llm), fake_embedder, threshold=2.0)
    pipe.settings.answer.max_tokens, pipe.settings.answer.repeat_guard = 80, "off"
    pipe.settings.answer.max_sentences = 0
    long = drafted(pipe, "Tell me about the tiles.")
    pipe.settings.answer.max_sentences = 1
    short = drafted(pipe, "Tell me about the tiles.")
    assert sentences_ended(long) >= 2 and sentences_ended(short) <= 1
    assert long.startswith(short.strip()) and len(short) < len(long)


@pytest.mark.slow
def test_context_aware_decoding_at_alpha_zero_is_greedy_and_cache_safe(tmp_path, fake_embedder):
    """α = 0 leaves the prompt's logits alone: the two-sequence batches must then give the
    greedy answer token for token; at α > 0 a cached answer still equals the uncached one."""
    from assistant.config import Settings
    from assistant.llm import make_llm
    from tests.assistant.test_pipeline import build, run

    pipe = build(tmp_path, make_llm(Settings().llm), fake_embedder, threshold=2.0)
    question = "When does the kitchen demolition start?"
    greedy, _ = run(pipe.answer(question, NO_CACHE))
    pipe.settings.answer.decoding, pipe.settings.answer.cad_alpha = "cad", 0.0
    assert run(pipe.answer(question, NO_CACHE))[0] == greedy
    pipe.settings.answer.cad_alpha = 0.5
    naive, _ = run(pipe.answer(question, NO_CACHE))
    first, _ = run(pipe.answer(question))
    again, done = run(pipe.answer(question))
    assert naive.strip() and naive == first == again and done.kv_reused_tokens > 0


def test_loop_stop_is_for_repeats_not_numbers():
    assert is_looping([7, 1, 2, 3, 1, 2, 3, 1, 2, 3])
    assert not is_looping([4, 0, 0, 0])  # "4000": digits are single tokens
    assert is_looping([5] * 8)
    assert not is_looping(list(range(40)))
