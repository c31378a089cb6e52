"""Verified QA-bank hits with the real embedder and retriever: a near-miss is refused (and not
marked stale), a paraphrase is served, and `remember` never fills in a near-miss's entry."""

from __future__ import annotations

import pytest

from assistant.answer.qa_memory import lookup_hit
from assistant.answer.qa_verify import HitVerifier
from assistant.config import ConfigError, Settings
from assistant.config_sections import CacheSettings
from assistant.knowledge.embeddings import make_embedder
from assistant.knowledge.retrieval import Retriever
from cache.db import open_cache_db
from cache.qa_bank import QABank
from tests.conftest import KITCHEN, TILES, WEDDING, empty_store, import_mails

pytestmark = pytest.mark.slow

MAILS = [
    KITCHEN,
    ("Flat 220", "Joke lives in flat 220 on my floor and has the spare key."),
    ("Flat 218", "Flat 218 on my floor is empty since the Jansens moved out in May."),
    TILES,
    WEDDING,
]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    embedder = make_embedder(Settings().embedding)
    store = empty_store()
    import_mails(store, embedder, tmp_path_factory.mktemp("mail") / "box.mbox", MAILS)
    return embedder, Retriever(store, embedder, None)


def stored(world, question: str, answer: str):
    """A bank holding `question`, answered from its own top chunks, as the app stores it."""
    embedder, retriever = world
    bank = QABank(open_cache_db(None), 0.95, 1 << 20, candidate_threshold=0.8)
    vector = embedder.embed_batch([question])[0]
    sources = [str(h.chunk_id) for h in retriever.search(question, k=3, query_vector=vector)]
    return bank, bank.add(question, vector, answer, sources)


def ask(world, bank, verifier, question: str):
    vector = world[0].embed_batch([question])[0]
    return lookup_hit(bank, vector, verifier.check(question, vector))


def test_a_near_miss_is_refused_and_not_marked_stale(world):
    verifier = HitVerifier(world[1], CacheSettings())
    bank, entry = stored(world, "Who lives in flat 220 on my floor?", "Joke.")
    question = "Who lives in flat 218 on my floor?"
    vector = world[0].embed_batch([question])[0]
    assert bank.nearest(vector).similarity >= 0.8  # a candidate by cosine
    assert verifier.verdict(question, vector, bank.get(entry)).reason == "guard:numbers"
    assert ask(world, bank, verifier, question) is None
    assert not bank.get(entry).stale and bank.get(entry).hits == 0


def test_a_paraphrase_is_served(world):
    verifier = HitVerifier(world[1], CacheSettings())
    bank, entry = stored(world, "When does the kitchen demolition start?", "Monday 2 March.")
    hit = ask(world, bank, verifier, "When will the kitchen demolition begin?")
    assert hit is not None and hit.entry.id == entry and bank.get(entry).hits == 1


def test_the_retrieval_check_refuses_an_answer_from_other_sources(world):
    embedder, retriever = world
    question = "Which tiles did we choose for the kitchen?"
    vector = embedder.embed_batch([question])[0]
    wedding = retriever.search("Elin's wedding in Uppsala", k=1)[0].chunk_id
    bank = QABank(open_cache_db(None), 0.95, 1 << 20, candidate_threshold=0.8)
    entry = bank.get(bank.add(question, vector, "Mosa.", [str(wedding)]))
    for mode, reason in (("retrieval", "retrieval"), ("guard", "ok")):
        settings = CacheSettings(qa_verify=mode, qa_retrieval_k=2)  # of 5 mails
        verifier = HitVerifier(retriever, settings)
        assert verifier.verdict(question, vector, entry).reason == reason


def test_one_lookup_retrieves_once_and_off_means_no_check(world):
    embedder, retriever = world
    calls = []

    class Counting(Retriever):
        def search(self, *args, **kwargs):
            calls.append(args)
            return super().search(*args, **kwargs)

    counting = Counting(retriever.store, embedder, None)
    bank = QABank(open_cache_db(None), 0.95, 1 << 20, candidate_threshold=0.5)
    for q in ("When does the kitchen demolition start?", "When does the demolition start?"):
        bank.add(q, embedder.embed_batch([q])[0], "Monday.", ["999999"])  # sources: unknown
    verifier = HitVerifier(counting, CacheSettings(qa_verify="retrieval"))
    assert ask(world, bank, verifier, "When will the kitchen demolition begin?") is None
    assert len(calls) == 1
    assert HitVerifier(counting, CacheSettings(qa_verify="off")).check("q", None) is None
    with pytest.raises(ConfigError):
        HitVerifier(counting, CacheSettings(qa_verify="guard+cosine"))


def test_remember_fills_in_a_paraphrase_but_not_a_near_miss(world, tmp_path):
    from assistant.llm import make_llm
    from tests.assistant.wiring import answerer_over

    embedder, retriever = world
    llm = make_llm(Settings().llm)
    pipe = answerer_over(
        retriever.store, embedder, llm, tmp_path / "kv", None, "S",
        threshold=0.95, candidate_threshold=0.8,
    )  # fmt: skip
    bank = pipe.qa
    remember = pipe.memory.remember
    pending = remember("Who lives in flat 220 on my floor?", _v(embedder, 220), None, ["1"])
    other = remember("Who lives in flat 218 on my floor?", _v(embedder, 218), "Nobody.", ["2"])
    assert other != pending and bank.get(pending).answer is None  # a near-miss: its own entry
    again = "who lives in flat 220 on my floor"
    assert pipe.memory.remember(again, embedder.embed_batch([again])[0], "Joke.", ["1"]) == pending
    assert bank.get(pending).answer == "Joke."


def _v(embedder, flat: int):
    return embedder.embed_batch([f"Who lives in flat {flat} on my floor?"])[0]
