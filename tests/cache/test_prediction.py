"""Cleaning what a small model writes, dropping known questions, the abstract and the history."""

from __future__ import annotations

import numpy as np

from cache.db import open_cache_db
from cache.prediction import (
    AbstractItem,
    History,
    KnowledgeAbstract,
    clean_question,
    drop_known,
    parse_questions,
)
from cache.qa_bank import QABank
from tests.conftest import FakeEmbedder


def test_clean_question_keeps_questions_about_the_content():
    assert clean_question("When  is the next OTA rollout?") == "When is the next OTA rollout?"
    assert clean_question("- Who approved the budget? Because") == "Who approved the budget?"
    assert (
        clean_question("2. What colour are the kitchen tiles")
        == "What colour are the kitchen tiles?"
    )


def test_clean_question_drops_meta_questions_loops_and_fragments():
    assert clean_question("Who is the author of the passage?") is None
    assert clean_question("What is the answer to the question: What is it?") is None
    assert clean_question("When is is is is is is is is is?") is None
    assert clean_question("Kitchen tiles.") is None
    assert clean_question("When?") is None


def test_parse_questions_one_per_line_without_repeats():
    text = "When does Bram start?\n- when does bram start?\nnot a question\nWho pays the tiles?"
    assert parse_questions(text) == ["When does Bram start?", "Who pays the tiles?"]


def test_drop_known_skips_bank_questions_and_batch_repeats():
    embedder = FakeEmbedder()
    bank = QABank(open_cache_db(None), threshold=0.95, budget_bytes=1 << 20)
    known = "When does the kitchen work start?"
    bank.add(known, embedder.embed_batch([known])[0], None)
    kept = drop_known(
        [known, "Who found the radio bug?", "who found the radio bug?", "Where is the wedding?"],
        embedder,
        bank,
        threshold=0.95,
    )
    assert [q for q, _ in kept] == ["Who found the radio bug?", "Where is the wedding?"]
    assert all(isinstance(v, np.ndarray) for _, v in kept)


def test_abstract_merges_items_once_and_remembers_how_far_it_read():
    abstract = KnowledgeAbstract(open_cache_db(None))
    items = [AbstractItem(1, "person", "Bram de Vries"), AbstractItem(1, "topic", "Kitchen")]
    assert abstract.merge(items) == 2
    assert abstract.merge([*items, AbstractItem(2, "topic", "Wedding")]) == 1
    abstract.mark_read(2)
    assert abstract.read_upto() == 2
    assert "Kitchen" in abstract.render() and "Bram de Vries" in abstract.render()


def test_history_keeps_the_newest_questions_in_order():
    history = History(open_cache_db(None), keep=3)
    for q in ["a?", "b?", "c?", "d?"]:
        history.add(q)
    assert history.recent(10) == ["b?", "c?", "d?"]
