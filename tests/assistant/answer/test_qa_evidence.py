"""QA-bank hits decided by evidence, with the real embedder, retriever and line scorer: a stored
answer is served for a paraphrase (its quote is the stored quote), and refused for a question
whose own quote is another line of the same mail, for another person, and where nothing is
found."""

from __future__ import annotations

import pytest

from assistant.answer.evidence import LineFinder
from assistant.answer.qa_memory import lookup_hit
from assistant.answer.qa_verify import HitVerifier
from assistant.config import Settings
from assistant.config_sections import CacheSettings
from assistant.knowledge.embeddings import make_embedder
from assistant.knowledge.retrieval import Retriever
from cache.db import open_cache_db
from cache.qa_bank import QABank
from tests.conftest import TILES, WEDDING, empty_store, import_mails

pytestmark = pytest.mark.slow

MAILS = [
    ("New hire", "Hi all,\n\nHenrik Dahl starts on Monday 3 March in the Oslo office.\n\n"
     "He signed for a salary of 61,000 euro a year.\n\nBest,\nAnna"),
    WEDDING,
    TILES,
]  # fmt: skip


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    embedder = make_embedder(Settings().embedding)
    store = empty_store()
    import_mails(store, embedder, tmp_path_factory.mktemp("mail") / "box.mbox", MAILS, "e")
    retriever = Retriever(store, embedder, None)
    # a reader that judges every pair the same: these tests are of the evidence check's cuts
    verifier = HitVerifier(retriever, CacheSettings(), same=lambda stored, asked: True)
    return embedder, retriever, LineFinder(embedder), verifier


def quote(world, question: str):
    embedder, retriever, lines, _ = world
    vector = embedder.embed_batch([question])[0]
    hits = retriever.search(question, k=3, query_vector=vector)
    return vector, hits, lines.find(question, vector, [h.record for h in hits])


def stored(world, question: str, answer: str, band: str = "answer"):
    """A bank holding `question`'s answer with the lines its own quote showed, as the app keeps
    it (answer/qa_memory.py)."""
    vector, hits, found = quote(world, question)
    assert found.band == band
    bank = QABank(open_cache_db(None), 0.95, 1 << 20, 0.83, evidence_threshold=0.55)
    entry = bank.add(question, vector, answer, [str(h.chunk_id) for h in hits],
                     evidence=found.evidence())  # fmt: skip
    return bank, entry


def verdict(world, bank, entry: int, question: str):
    vector, _, found = quote(world, question)
    return world[3].verdict(question, vector, bank.get(entry), found)


def test_a_paraphrase_whose_quote_is_the_stored_quote_is_served(world):
    bank, entry = stored(world, "When does Henrik Dahl start?", "Henrik starts on 3 March.")
    assert bank.get(entry).evidence[0][1].startswith("Henrik Dahl starts on Monday 3 March")
    question = "When is Henrik Dahl's first day?"
    assert verdict(world, bank, entry, question).reason == "ok"
    vector, _, found = quote(world, question)
    hit = lookup_hit(bank, vector, world[3].check(question, vector, found))
    assert hit is not None and hit.entry.id == entry


def test_a_quote_under_the_answer_bar_vouches_for_no_stored_answer(world):
    bank, entry = stored(world, "When does Henrik Dahl start?", "Henrik starts on 3 March.")
    question = "What's Henrik's first day in the new job?"
    _, _, found = quote(world, question)
    assert found.band == "weak" and "3 March" in found.best_line  # the right line, in doubt
    assert verdict(world, bank, entry, question).reason == "weak"
    bank, entry = stored(world, question, "Henrik starts on 3 March.", band="weak")
    assert verdict(world, bank, entry, question.lower()).reason == "ok"  # the same question again


def test_another_line_of_the_same_mail_is_another_question(world):
    bank, entry = stored(world, "When does Henrik Dahl start?", "Henrik starts on 3 March.")
    question = "How much does Henrik earn a year?"
    _, _, found = quote(world, question)
    assert "61,000" in found.best_line  # its own best line: the salary
    assert verdict(world, bank, entry, question).reason == "evidence"
    # the scorer can hardly tell the salary line from the start line here (the names weigh),
    # but the question asks for a number, not a date
    question = "What salary did Henrik Dahl sign for?"
    assert verdict(world, bank, entry, question).reason in ("evidence", "kind")


def test_a_name_the_stored_question_does_not_have_is_refused(world):
    bank, entry = stored(world, "When does Henrik Dahl start?", "Henrik starts on 3 March.")
    question = "When does Fatima Bennani start?"
    result = verdict(world, bank, entry, question)
    assert not result.served and result.reason in ("slots:names", "evidence", "not found")


def test_nothing_found_is_never_served(world):
    bank, entry = stored(world, "When does Henrik Dahl start?", "Henrik starts on 3 March.")
    question = "What is the capital of Peru?"
    _, _, found = quote(world, question)
    if found.not_found:
        assert verdict(world, bank, entry, question).reason == "not found"
    else:  # the line scorer quotes something: it is not the stored line
        assert not verdict(world, bank, entry, question).served


def test_a_remembered_not_found_is_not_served_where_the_quote_finds_a_line(world):
    """The night keeps a question whose quote found nothing with no sentence and no lines; a
    later question (the same one, after mail that answers it came) whose own quote finds a
    line gets a written answer, not the remembered empty one."""
    question = "When does Henrik Dahl start?"
    vector, hits, found = quote(world, question)
    assert not found.not_found
    bank = QABank(open_cache_db(None), 0.95, 1 << 20, 0.83, evidence_threshold=0.55)
    entry = bank.add(question, vector, "", [str(h.chunk_id) for h in hits], evidence=[])
    assert verdict(world, bank, entry, question).reason == "found now"


def test_without_a_reader_only_what_the_text_shows_the_same_is_served(world):
    """No reader (set to none, not loaded, memory short) to judge "the same question": the
    question guard's word check decides, so a paraphrase on the stored line is answered
    afresh and the same question again is served (bench/results/no_reader_guard.json)."""
    bank, entry = stored(world, "When does Henrik Dahl start?", "Henrik starts on 3 March.")
    alone = HitVerifier(world[1], CacheSettings())
    for question, reason in (("When is Henrik Dahl's first day?", "guard:"),
                             ("when does Henrik Dahl start", "ok")):  # fmt: skip
        vector, _, found = quote(world, question)
        assert alone.verdict(question, vector, bank.get(entry), found).reason.startswith(reason)
