"""The real SmolLM2's decoded pieces for fixed prompts, pinned (decoded_pins.json, written by
the code before the decode loop moved from prompt_cache into llm/): each stop rule (sentence
limit, loop guards off/ban/stop, max tokens), context-aware decoding, and the background
completions must stream the same pieces after any change to the loop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.answer.answerer import NO_CACHE
from assistant.clock import Clock
from assistant.config import Settings
from assistant.events import TokenStreamed
from assistant.llm import make_llm
from tests.assistant.test_pipeline import build
from tests.conftest import KITCHEN

pytestmark = pytest.mark.slow

PINNED = json.loads((Path(__file__).parent / "decoded_pins.json").read_text(encoding="utf-8"))
KITCHEN_Q, TILES_Q = "When does the kitchen demolition start?", "Tell me about the tiles."


def pieces(events) -> list[str]:
    return [e.text for e in events if isinstance(e, TokenStreamed)]


def decoded(tmp_path, fake_embedder) -> dict:
    llm = Settings().llm
    llm.weights = "as-is"  # pinned from the shipped file's weights, not its f16 copy's
    pipe = build(tmp_path, make_llm(llm), fake_embedder, threshold=2.0)
    a, out = pipe.settings.answer, {}
    out["kitchen"] = pieces(pipe.answer(KITCHEN_Q, NO_CACHE))
    a.max_tokens, a.max_sentences, a.repeat_ngram = 80, 0, 4
    vector = pipe.embedder.embed_batch([TILES_Q])[0]
    segments = pipe.cache.segments([h.record.text for h in pipe.select(TILES_Q, vector)], TILES_Q)
    for mode in ("off", "ban", "stop"):
        a.repeat_guard = mode
        out[f"tiles_{mode}"] = pieces(pipe.answer(TILES_Q, NO_CACHE))
        events = pipe.cache.stream(TILES_Q, segments, False, lambda: None, Clock())
        out[f"draft_tiles_{mode}"] = pieces(events)
    a.max_sentences = 1
    out["tiles_stop_1"] = pieces(pipe.answer(TILES_Q, NO_CACHE))
    a.repeat_guard, a.max_sentences, a.max_tokens = "stop", 0, 24
    a.decoding, a.cad_alpha = "cad", 0.5
    out["kitchen_cad"] = pieces(pipe.answer(KITCHEN_Q, NO_CACHE))
    a.decoding = "greedy"
    out["complete"] = pipe.cache.complete("The capital of France is", 24, background=False)
    prompts = ["The demolition starts on", "Subject:"]
    out["continue"] = pipe.cache.continue_after_chunk(
        KITCHEN[1], prompts, 16, background=False, kv=False
    )
    return out


def test_decoded_pieces_are_the_pinned_ones(tmp_path, fake_embedder):
    got = decoded(tmp_path, fake_embedder)
    for case, want in PINNED.items():
        assert got[case] == want, case
