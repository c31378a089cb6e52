from __future__ import annotations

import numpy as np
import pytest

from assistant.answer.qa_memory import find_hit, lookup_hit
from cache.db import open_cache_db
from cache.qa_bank import CANDIDATES, QABank


def unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture
def bank():
    return QABank(open_cache_db(None), threshold=0.9, budget_bytes=10_000)


def test_hit_above_threshold_only(bank):
    bank.add("when does the kitchen work start", unit(1, 0, 0), "On 2 March.")
    hit = bank.lookup(unit(1, 0.2, 0))  # cosine 0.98
    assert hit is not None and hit.entry.answer == "On 2 March." and hit.similarity > 0.9
    assert bank.lookup(unit(1, 1, 0)) is None  # cosine 0.71
    assert bank.get(hit.entry.id).hits == 1


def test_pending_and_stale_entries_are_not_served(bank):
    pending = bank.add("what is the booking code", unit(0, 1, 0), None, origin="predicted")
    assert bank.lookup(unit(0, 1, 0)) is None
    bank.set_answer(pending, "XK7Q2P", ["12"], version=3)
    assert bank.lookup(unit(0, 1, 0)).entry.answer == "XK7Q2P"
    bank.mark_stale([pending])
    assert bank.lookup(unit(0, 1, 0)) is None
    assert bank.stats()["stale"] == 1


def test_lfu_eviction_keeps_the_budget():
    bank = QABank(
        open_cache_db(None), threshold=0.9, budget_bytes=3 * 420
    )  # an entry: 2 + 12 + 400 bytes
    ids = [bank.add(f"q{i}", unit(i + 1, 1, 0.5), "a" * 400) for i in range(3)]
    bank.lookup(unit(1, 1, 0.5))
    bank.lookup(unit(1, 1, 0.5))
    bank.add("q3", unit(0, 0, 1), "a" * 400)
    assert bank.used_bytes() <= 3 * 420
    left = {e.question for e in bank.entries()}
    assert "q0" in left and "q3" in left and len(left) < 4
    assert ids[0] in {e.id for e in bank.entries()}


def test_new_entries_are_visible_to_lookup_at_once(bank):
    assert bank.lookup(unit(0, 0, 1)) is None
    bank.add("x", unit(0, 0, 1), "yes")
    assert bank.lookup(unit(0, 0, 1)).entry.answer == "yes"


def test_verified_lookup_walks_candidates_above_the_candidate_floor():
    bank = QABank(open_cache_db(None), 0.95, 10_000, candidate_threshold=0.8)
    near = bank.add("who lives in flat 220", unit(1, 0.1, 0), "Joke.")
    far = bank.add("who lives in flat 218", unit(1, 0.3, 0), "Nobody.")
    asked = unit(1, 0.12, 0)  # nearest to `near` (0.99+), 0.98 to `far`
    seen = []

    def verify(entry):
        seen.append(entry.id)
        return entry.id == far

    hit = lookup_hit(bank, asked, verify)
    assert seen == [near, far] and hit.entry.id == far and hit.similarity < 0.99
    assert bank.get(near).stale is False and bank.get(near).hits == 0  # refused: untouched
    assert bank.get(far).hits == 1
    assert lookup_hit(bank, unit(0.3, 1, 0), lambda e: True) is None  # cosine ≤ 0.58 < 0.8
    assert bank.lookup(unit(1, 0.8, 0)) is None  # cosine ≤ 0.93: unverified, τ = 0.95 applies


def test_a_freshness_veto_marks_stale_and_a_refusal_does_not():
    bank = QABank(open_cache_db(None), 0.95, 10_000, candidate_threshold=0.8)
    first = bank.add("q1", unit(1, 0, 0), "a1")
    second = bank.add("q2", unit(1, 0.2, 0), "a2")
    hit = lookup_hit(bank, unit(1, 0.05, 0), lambda e: True, fresh=lambda e: e.id != first)
    assert hit.entry.id == second and bank.get(first).stale
    assert bank.get(first).hits == 0 and bank.get(second).hits == 1
    assert lookup_hit(bank, unit(1, 0.05, 0), lambda e: False) is None
    assert not bank.get(second).stale


def test_after_a_stale_mark_the_bank_is_asked_again_and_the_check_sees_the_next():
    bank = QABank(open_cache_db(None), 0.95, 10_000, candidate_threshold=0.8)
    ids = [bank.add(f"q{i}", unit(1, 0.05 * i, 0), f"a{i}") for i in range(5)]
    seen = []

    def check(entry):
        seen.append(entry.id)
        return True

    hit = lookup_hit(bank, unit(1, 0, 0), check, fresh=lambda e: e.id not in ids[:2])
    assert seen == ids[:3] and hit.entry.id == ids[2]
    assert [bank.get(i).stale for i in ids] == [True, True, False, False, False]
    assert [bank.get(i).hits for i in ids] == [0, 0, 1, 0, 0]


def test_candidates_are_offered_nearest_first_within_the_floors_and_the_limit():
    bank = QABank(open_cache_db(None), 0.95, 10_000, candidate_threshold=0.8)
    ids = [bank.add(f"q{i}", unit(1, 0.1 * i, 0), f"a{i}") for i in range(6)]  # cosine ≥ 0.86
    far = bank.add("far", unit(0.3, 1, 0), "no")  # cosine 0.29: under the floor
    asked = unit(1, 0, 0)
    offered = [h.entry.id for h in bank.candidates(asked, verified=True)]
    assert offered == ids[:CANDIDATES] and far not in offered
    assert [h.entry.id for h in bank.candidates(asked, verified=False)] == ids[:1]
    bank.refuse(ids[0], 1.0)  # refused for every question: passed over, still counted in limit
    assert [h.entry.id for h in bank.candidates(asked, verified=True)] == ids[1:CANDIDATES]
    assert bank.candidates(asked, verified=False) == []
    assert bank.candidates(unit(0, 0, 1), verified=True) == []  # nearest under the floor
    assert all(bank.get(i).hits == 0 and not bank.get(i).stale for i in ids)  # nothing counted


@pytest.mark.slow
def test_a_near_miss_at_cosine_099_is_refused_and_a_paraphrase_is_served():
    from assistant.config_sections import EmbeddingSettings
    from assistant.knowledge.embeddings import make_embedder
    from cache.verify import Guard

    embedder, guard = make_embedder(EmbeddingSettings()), Guard()
    asked = "What did Bram de Vries quote for the kitchen renovation at Heemraadssingel {} in {}?"
    stored = asked.format("214-C", "Rotterdam")
    near_miss = asked.format("216-C", "Rotterdam")  # another house number
    paraphrase = asked.format("214-C", "rotterdam").lower().rstrip("?")
    vectors = embedder.embed_batch([stored, near_miss, paraphrase])
    assert float(vectors[0] @ vectors[1]) >= 0.99
    bank = QABank(open_cache_db(None), 0.95, 10_000, candidate_threshold=0.8)
    entry = bank.add(stored, vectors[0], "EUR 14,250.")

    def verify_for(question):
        return lambda e: guard.check(question, e.question) is None

    assert bank.lookup(vectors[1]) is not None  # cosine alone serves the other house number
    assert lookup_hit(bank, vectors[1], verify_for(near_miss)) is None
    assert not bank.get(entry).stale
    assert lookup_hit(bank, vectors[2], verify_for(paraphrase)).entry.id == entry


class Named:
    """A tiny encoder with a name: axis `i` for a question that mentions word i."""

    def __init__(self, name: str, words: list[str]) -> None:
        self.name = name
        self.words = words
        self.calls = 0

    def embed_batch(self, texts) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), len(self.words)), dtype=np.float32)
        for row, text in enumerate(texts):
            for i, word in enumerate(self.words):
                out[row, i] = float(word in text)
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


WORDS = ["kitchen", "tiles", "wedding"]


def test_each_entry_names_its_encoder_and_other_encoders_are_never_compared():
    db = open_cache_db(None)
    old = QABank(db, 0.9, 10_000, embedder=Named("old-encoder", WORDS))
    entry = old.add("kitchen start", unit(1, 0, 0), "On 2 March.", ["7"])
    assert db.execute("SELECT encoder FROM qa_entries").fetchone()[0] == "old-encoder"
    plain = QABank(db, 0.9, 10_000)  # no embedder: only unnamed vectors, none here
    assert plain.lookup(unit(1, 0, 0)) is None and plain.nearest(unit(1, 0, 0)) is None
    with pytest.raises(ValueError, match="embedded by old-encoder"):
        plain.vector(entry)


def test_switching_encoder_re_embeds_stored_questions_and_keeps_their_answers():
    db = open_cache_db(None)
    old = QABank(db, 0.9, 10_000, embedder=Named("old-encoder", WORDS))
    kept = old.add("kitchen start", unit(0, 0, 1), "On 2 March.", ["7"])  # a vector unlike new's
    old.lookup(unit(0, 0, 1))
    new_encoder = Named("new-encoder", WORDS)
    new = QABank(db, 0.9, 10_000, embedder=new_encoder)
    hit = new.lookup(new_encoder.embed_batch(["kitchen start"])[0])
    assert hit is not None and hit.entry.id == kept and hit.entry.answer == "On 2 March."
    assert hit.entry.sources == ["7"] and hit.entry.hits == 1  # its hit under the old encoder
    np.testing.assert_allclose(new.vector(kept), unit(1, 0, 0))
    assert db.execute("SELECT encoder FROM qa_entries").fetchone()[0] == "new-encoder"
    calls = new_encoder.calls
    new.lookup(unit(1, 0, 0))
    assert new_encoder.calls == calls  # re-embedded once, not per lookup
    assert old.lookup(unit(0, 0, 1)) is None  # its old vector is gone, never served stale
    assert old.lookup(unit(1, 0, 0)).entry.id == kept  # re-embedded back by the old encoder


def test_an_old_home_keeps_its_answers_through_the_migration(tmp_path):
    from sqlite_utils import Database

    from cache.db import MIGRATIONS, apply_migrations, connect

    path = tmp_path / "qa.db"
    before = Database(connect(path))
    apply_migrations(before, [m for m in MIGRATIONS if m[0] != "0005_qa_encoder"])
    before.execute(  # an entry as the bank stored it before entries named their encoder
        "INSERT INTO qa_entries (question, embedding, answer, sources, size, created, last_used) "
        "VALUES ('kitchen start', ?, 'On 2 March.', '[\"7\"]', 60, 0, 0)",
        [unit(0, 1, 0).tobytes()],
    )
    before.conn.close()
    db = open_cache_db(path)
    assert db.execute("SELECT encoder FROM qa_entries").fetchone()[0] == ""
    encoder = Named("minilm", WORDS)
    bank = QABank(db, 0.9, 10_000, embedder=encoder)
    hit = bank.lookup(encoder.embed_batch(["kitchen start"])[0])
    assert hit is not None and hit.entry.answer == "On 2 March." and hit.entry.sources == ["7"]
    assert bank.stats()["entries"] == 1


def test_a_refused_entry_is_served_only_to_questions_closer_than_the_refused_one(bank):
    entry = bank.add("what does the venue cost per person", unit(1, 0, 0), "EUR 85 a head.")
    asked = unit(1, 0.3, 0)  # cosine 0.958: served, and the user says it is not what they asked
    hit = bank.lookup(asked)
    assert hit is not None and hit.entry.id == entry
    bank.refuse(entry, hit.similarity)
    assert bank.lookup(asked) is None
    assert bank.lookup(unit(1, 0.35, 0)) is None  # farther still: refused too
    closer = bank.lookup(unit(1, 0.1, 0))  # cosine 0.995: nearer than the refused question
    assert closer is not None and closer.entry.id == entry
    bank.refuse(entry, 0.2)  # a lower bound never loosens a higher one
    assert bank.get(entry).refused_at == pytest.approx(hit.similarity)
    assert bank.get(entry).answer == "EUR 85 a head."  # the answer itself stays


def test_a_refused_entry_gives_way_to_the_next_candidate():
    bank = QABank(open_cache_db(None), 0.95, 10_000, candidate_threshold=0.8)
    first = bank.add("what does the venue cost per person", unit(1, 0.1, 0), "EUR 85.")
    second = bank.add("what does the venue cost", unit(1, 0.3, 0), "EUR 2,400 in all.")
    asked = unit(1, 0.15, 0)
    assert lookup_hit(bank, asked, lambda e: True).entry.id == first
    bank.refuse(first, find_hit(bank, asked, lambda e: True).similarity)
    assert lookup_hit(bank, asked, lambda e: True).entry.id == second
    assert bank.get(first).hits == 1 and bank.get(second).hits == 1  # find counts nothing


def test_evidence_lines_are_kept_and_lower_the_floor_for_their_entry_only():
    bank = QABank(open_cache_db(None), 0.95, 10_000, candidate_threshold=0.9,
                  evidence_threshold=0.5)  # fmt: skip
    lines = [(7, "Demolition starts on Monday 2 March."), (7, "Bring the keys.")]
    with_lines = bank.add("when does the demolition start", unit(1, 0, 0), "2 March.",
                          ["7"], evidence=lines)  # fmt: skip
    assert bank.get(with_lines).evidence == tuple(lines) and bank.get(with_lines).answered_at
    asked = unit(1, 1.2, 0)  # cosine 0.64: under the question floor, over the evidence floor
    assert lookup_hit(bank, asked, lambda e: True).entry.id == with_lines
    bank.mark_stale([with_lines])
    bank.add("when does the demolition start", unit(1, 0, 0), "2 March.", ["7"])  # no lines
    assert lookup_hit(bank, asked, lambda e: True) is None  # a question-only entry: 0.9


def test_served_hits_are_logged_until_the_self_check_has_seen_them():
    bank = QABank(open_cache_db(None), 0.95, 10_000)
    entry = bank.add("when does the demolition start", unit(1, 0, 0), "2 March.", ["7"])
    bank.log_served(entry, "when will demolition begin", 0.91)
    bank.log_served(entry, "demolition start date?", 0.88)
    served = bank.unchecked(10)
    assert [s.question for s in served] == ["demolition start date?", "when will demolition begin"]
    bank.checked(served[0].id)
    assert [s.question for s in bank.unchecked(10)] == ["when will demolition begin"]


def test_an_answer_records_whether_a_reader_judged_it_and_a_new_answer_is_judged_anew(bank):
    unjudged = bank.add("when does the kitchen work start", unit(1, 0, 0), "On 2 March.")
    judged = bank.add("what tiles did we choose", unit(0, 1, 0), "Mosa.", judged=True)
    assert not bank.get(unjudged).judged and bank.get(judged).judged
    bank.mark_judged(unjudged)  # a reader confirmed it when it first served it
    assert bank.get(unjudged).judged
    bank.mark_stale([judged])
    bank.set_answer(judged, "Mosa, Warm Grey.", ["9"], version=2)  # the night's, no reader
    assert not bank.get(judged).judged
    bank.set_answer(judged, "Mosa tiles.", ["9"], version=3, judged=True)
    assert bank.get(judged).judged


def test_answers_stored_before_the_judged_column_are_unjudged_and_kept(tmp_path):
    """No one knows whether a reader judged an answer kept before entries said so (one kept
    with the reader off was kept the same): it opens unjudged, its answer as it was."""
    from sqlite_utils import Database

    from cache.db import MIGRATIONS, apply_migrations, connect

    path = tmp_path / "qa.db"
    before = Database(connect(path))
    apply_migrations(before, [m for m in MIGRATIONS if m[0] != "0013_qa_judged"])
    before.execute(
        "INSERT INTO qa_entries (question, embedding, answer, sources, size, created, last_used, "
        "evidence) VALUES ('kitchen start', ?, 'On 2 March.', '[\"7\"]', 60, 0, 0, ?)",
        [unit(1, 0, 0).tobytes(), '[[7, "Demolition starts on Monday 2 March."]]'],
    )
    before.conn.close()
    bank = QABank(open_cache_db(path), 0.9, 10_000)
    [entry] = bank.entries()
    assert entry.answer == "On 2 March." and entry.origin == "user" and entry.sources == ["7"]
    assert entry.evidence == ((7, "Demolition starts on Monday 2 March."),)
    assert not entry.judged
    assert bank.lookup(unit(1, 0, 0)).entry.id == entry.id  # still served
