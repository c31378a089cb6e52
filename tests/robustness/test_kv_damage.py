"""A KV blob damaged on disk (a flipped byte anywhere, cut short, emptied, grown, removed) never
changes an answer: the checksum catches it, that segment and the ones after it are prefilled
again, the blob is stored anew and verifies, and the answer is the uncached one."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from assistant.answer.answerer import NO_CACHE
from assistant.config import Settings
from assistant.llm import make_llm
from tests.assistant.test_pipeline import build, run
from tests.robustness.checks import blob_problems

pytestmark = pytest.mark.slow


def flip(data: bytes, at: int, rng: random.Random) -> bytes:
    out = bytearray(data)
    out[at] ^= rng.randrange(1, 256)  # never 0: the byte always changes
    return bytes(out)


def flip_several(data: bytes, rng: random.Random) -> bytes:
    for at in rng.sample(range(len(data)), 5):
        data = flip(data, at, rng)
    return data


# name → new content of the blob file (None: the file is removed)
DAMAGE: dict[str, Callable[[bytes, random.Random], bytes | None]] = {
    "first byte flipped": lambda d, r: flip(d, 0, r),
    "header byte flipped": lambda d, r: flip(d, r.randrange(1, 64), r),
    "middle byte flipped": lambda d, r: flip(d, len(d) // 2 + r.randrange(-512, 512), r),
    "last byte flipped": lambda d, r: flip(d, len(d) - 1, r),
    "five bytes flipped": flip_several,
    "cut short": lambda d, r: d[: r.randrange(1, len(d))],
    "emptied": lambda d, r: b"",
    "byte appended": lambda d, r: d + bytes([r.randrange(256)]),
    "removed": lambda d, r: None,
}


@pytest.fixture(scope="module")
def llm():
    settings = Settings().llm
    settings.n_threads = 1  # on a shared machine two llama.cpp threads wait on each other
    return make_llm(settings)


def test_a_damaged_kv_blob_never_changes_an_answer(tmp_path, llm, fake_embedder):
    pipe = build(tmp_path, llm, fake_embedder, threshold=2.0)  # τ > 1: the QA bank never answers
    question = "Who found the battery bug?"
    reference, _ = run(pipe.answer(question, NO_CACHE))
    run(pipe.answer(question))  # stores the KV of system, chunk 1, chunk 2
    nodes = pipe.kv.db.execute("SELECT blob_key, n_tokens FROM kv_nodes ORDER BY depth").fetchall()
    assert len(nodes) == 3 and all(key for key, _ in nodes)
    for seed, (name, damage) in enumerate(DAMAGE.items()):
        rng = random.Random(seed)
        depth = seed % len(nodes)  # each segment's blob in turn
        path = tmp_path / "kv" / nodes[depth][0][:2] / f"{nodes[depth][0]}.bin"
        damaged = damage(path.read_bytes(), rng)
        if damaged is None:
            path.unlink()
        else:
            path.write_bytes(damaged)
        text, done = run(pipe.answer(question))
        assert text == reference, name
        assert done.kv_reused_tokens == (nodes[depth - 1][1] if depth else 0), name
        assert blob_problems(pipe.kv.db.conn, tmp_path / "kv") == [], name
        assert pipe.kv.stats()["nodes_with_kv"] == len(nodes), name
    text, done = run(pipe.answer(question))
    assert text == reference and done.kv_reused_tokens == nodes[-1][1]
