"""The asker's stop with the real SmolLM2: asked for during the prefill, the answer ends before
the model's next piece (it waited for the whole prompt: 12.5 s on the demo with the default
writer), the KV tree keeps only the segments computed whole, and the next question is answered
as it would have been without the stop, token for token."""

from __future__ import annotations

import pytest

from assistant import events as p
from assistant.answer.answerer import NO_CACHE, Answerer
from assistant.config import Settings
from assistant.kv.prompt_cache import PIECE
from assistant.llm import make_llm
from cache.kv_tree import segment_hash
from tests.assistant.wiring import answerer_over
from tests.conftest import empty_store, import_mails

pytestmark = pytest.mark.slow

# two mails of some hundred tokens each: a chunk takes the model several pieces
KITCHEN = (
    "Kitchen start",
    "Bram's crew begins demolition of the kitchen on Monday 2 March at 8:00. "
    + "They take out the old cupboards, the sink and the tiles behind the stove first, "
    "then the floor; the electrician comes on Wednesday to move the sockets, and the "
    "plumber on Thursday for the new water pipes. Please empty the cupboards and the "
    "fridge before the weekend, and keep the hallway free for the skip. " * 2,
)
TILES = (
    "Tiles",
    "We chose Mosa tiles, 15 x 15 cm, colour Warm Grey, for the kitchen wall behind the "
    "counter, and large grey floor tiles, 60 x 60 cm, from the same shop in Delft. "
    "The shop delivers them on 9 March; Bram's tiler lays the floor in the second week "
    "and the wall once the counter is in place. " * 2,
)
QUESTION = "When does the kitchen demolition start?"
SYSTEM = "Answer from the context in one sentence.\n\nContext:\n"


@pytest.fixture(scope="module")
def llm():
    return make_llm(Settings().llm)


def build(tmp_path, llm, embedder) -> Answerer:
    store = empty_store()
    import_mails(store, embedder, tmp_path / "box.mbox", [KITCHEN, TILES])
    settings = Settings()
    settings.answer.context_chunks = 2
    settings.answer.max_tokens = 24
    # τ > 1: never a QA hit, each answer is the model's
    return answerer_over(store, embedder, llm, tmp_path / "kv", settings, SYSTEM, threshold=2.0)


def text_of(events) -> tuple[str, p.AnswerDone]:
    events = list(events)
    return "".join(e.text for e in events if isinstance(e, p.TokenStreamed)), events[-1]


def test_a_stop_during_the_prefill_ends_the_answer_before_the_next_piece(
    tmp_path, llm, fake_embedder, monkeypatch
):
    pipe = build(tmp_path, llm, fake_embedder)
    reference, _ = text_of(pipe.answer(QUESTION, NO_CACHE))
    assert reference.strip()
    system = pipe.cache.segments([], QUESTION).system
    pieces: list[int] = []  # n_past after each piece the model evaluated
    evaluate = llm.eval
    monkeypatch.setattr(llm, "eval", lambda tokens: (evaluate(tokens), pieces.append(llm.n_past)))
    asked: list[int] = []  # pieces evaluated when the stop was first seen

    def stop() -> bool:
        if llm.n_past >= len(system) + PIECE:  # a piece into the first chunk
            asked.append(len(pieces))
        return bool(asked)

    with pytest.raises(p.Stopped):
        list(pipe.answer(QUESTION, stop=stop))
    assert asked and len(pieces) == asked[0]  # not one piece more
    # the system prompt's node alone, whole; nothing of the chunk it was stopped in
    assert pipe.kv.stats()["nodes"] == 1
    assert pipe.kv.longest_prefix([segment_hash(system)]).n_tokens == len(system)
    assert pipe.qa.stats()["entries"] == 0

    text, done = text_of(pipe.answer(QUESTION))
    assert text == reference and done.kv_reused_tokens == len(system)
    text, done = text_of(pipe.answer(QUESTION))  # the whole prompt's nodes, kept by the last
    assert text == reference and done.kv_reused_tokens > len(system)


def test_a_stop_during_the_decode_ends_it_after_the_token_and_keeps_no_answer(
    tmp_path, llm, fake_embedder
):
    pipe = build(tmp_path, llm, fake_embedder)
    reference, _ = text_of(pipe.answer(QUESTION, NO_CACHE))
    streamed: list[str] = []
    with pytest.raises(p.Stopped):
        for event in pipe.answer(QUESTION, stop=lambda: len(streamed) >= 2):
            if isinstance(event, p.TokenStreamed):
                streamed.append(event.text)
    assert len(streamed) == 2 and reference.startswith("".join(streamed))
    assert pipe.qa.stats()["entries"] == 0
    text, done = text_of(pipe.answer(QUESTION))
    assert text == reference and done.kv_reused_tokens > 0
