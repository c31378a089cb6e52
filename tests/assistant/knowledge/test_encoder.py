"""The ONNX encoders against the torch one, and one encoder's vectors per index."""

from __future__ import annotations

import json

import numpy as np
import pytest

from assistant.config import ConfigError, load_settings
from assistant.config_sections import EmbeddingSettings
from assistant.importing.importer import Importer
from tests.conftest import FakeEmbedder, make_email, write_mbox

TEXTS = [
    "when does the kitchen work start",
    "From: Bram | Date: 2026-03-02 | Subject: tiles\n" + "The tiler comes on Monday at nine. " * 30,
    "ok",
    "Offerte €14.250 “inclusief” btw – akkoord? Grüße aus Köln, 東京",
]


@pytest.fixture(scope="module")
def encoders(tmp_path_factory):
    from assistant.knowledge.embeddings import make_embedder

    folder = str(tmp_path_factory.mktemp("encoders"))
    return {
        b: make_embedder(EmbeddingSettings(backend=b, encoders_dir=folder))
        for b in ("torch", "onnx", "onnx-int8")
    }


@pytest.mark.slow
def test_onnx_gives_the_torch_vectors_and_shares_their_name(encoders):
    reference = encoders["torch"].embed_batch(TEXTS)
    vectors = encoders["onnx"].embed_batch(TEXTS)
    assert encoders["onnx"].name == encoders["torch"].name
    assert np.allclose((vectors * reference).sum(1), 1.0, atol=1e-4)
    alone = np.vstack([encoders["onnx"].embed_batch([t]) for t in TEXTS])
    assert np.allclose(alone, vectors, atol=1e-4)  # length-sorted batches keep the input order


@pytest.mark.slow
def test_int8_vectors_are_close_but_carry_their_own_name(encoders):
    reference = encoders["torch"].embed_batch(TEXTS)
    vectors = encoders["onnx-int8"].embed_batch(TEXTS)
    assert encoders["onnx-int8"].name != encoders["torch"].name
    assert ((vectors * reference).sum(1) > 0.95).all()
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


@pytest.mark.slow
def test_the_search_path_does_not_import_torch(encoders, tmp_path):
    import subprocess
    import sys

    folder = str(encoders["onnx"].path.parent.parent)
    code = (
        "import sys\nfrom assistant.config import EmbeddingSettings\n"
        "from assistant.knowledge.embeddings import make_embedder\n"
        f"e = make_embedder(EmbeddingSettings(backend='onnx', encoders_dir={folder!r}))\n"
        "e.embed_batch(['hello'])\nprint('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_vectors_of_another_encoder_are_replaced_never_mixed(tmp_path, store):
    box = write_mbox(tmp_path / "in.mbox", [make_email(msgid=f"<m{i}@x>") for i in range(3)])
    first = Importer(store, FakeEmbedder()).run([box])
    other = FakeEmbedder()
    other.name = "fake-hash-64+other"
    second = Importer(store, other).run([box])
    assert first.embedded == second.embedded == 3
    models = {r[0] for r in store.db.execute("SELECT model FROM embeddings").fetchall()}
    assert models == {other.name}
    assert len(store.embedding_matrix(FakeEmbedder.name)[0]) == 0


def test_an_unknown_backend_is_a_config_error(tmp_path):
    (tmp_path / "config.toml").write_text('[embedding]\nbackend = "tensorrt"\n')
    with pytest.raises(ConfigError, match="embedding.backend"):
        load_settings(tmp_path / "config.toml", env={})


@pytest.mark.slow
def test_search_says_when_chunks_have_no_vector_from_its_encoder(tmp_path, capsys):
    from assistant.cli import main
    from assistant.home import open_home
    from assistant.knowledge.db import open_db
    from assistant.knowledge.encoder import INT8_SUFFIX
    from assistant.knowledge.store import KnowledgeStore

    home = open_home(tmp_path / "home")
    box = write_mbox(tmp_path / "in.mbox", [make_email(body="The tiles arrive Monday.")])
    Importer(KnowledgeStore(open_db(home.knowledge_db)), FakeEmbedder()).run([box])
    assert main(["search", "--home", str(home.root), "tiles"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    # auto: vectors no encoder of ours made are re-embedded with int8, as in a new home
    assert f"1 of 1 chunks have no vector from the encoder all-MiniLM-L6-v2{INT8_SUFFIX} " in err
    assert "1 hold vectors of fake-hash-64" in err and "Run `assistant import`" in err
    assert "to keep the old ones" not in err  # no backend of ours made those


def test_auto_keeps_the_encoder_a_home_holds_and_gives_a_new_home_int8():
    from assistant.knowledge.embeddings import resolve_backend
    from assistant.knowledge.encoder import INT8_SUFFIX

    base, int8 = "all-MiniLM-L6-v2", "all-MiniLM-L6-v2" + INT8_SUFFIX
    assert resolve_backend("auto", set(), base) == "onnx-int8"  # a new home
    assert resolve_backend("auto", {base}, base) == "onnx"  # float (or torch) vectors: kept
    assert resolve_backend("auto", {int8}, base) == "onnx-int8"
    assert resolve_backend("auto", {base, int8}, base) == "onnx-int8"  # half-way: int8 goes on
    assert resolve_backend("auto", {base + "+int8.v3"}, base) == "onnx-int8"  # re-embedded
    assert resolve_backend("auto", {"fake-hash-64"}, base) == "onnx-int8"
    for backend in ("torch", "onnx", "onnx-int8"):  # a backend the user names is the one used
        assert resolve_backend(backend, {int8}, base) == backend


def test_a_homes_encoders_are_read_from_its_first_and_last_vectors(tmp_path, store):
    assert store.end_vector_models() == set()
    mails = [make_email(msgid=f"<e{i}@x>", subject=f"s{i}", body=f"Body {i}.") for i in range(3)]
    Importer(store, FakeEmbedder()).run([write_mbox(tmp_path / "in.mbox", mails)])
    assert store.end_vector_models() == {FakeEmbedder.name}
    first, *_, last = store.chunk_ids()
    vector = np.zeros((1, 384), dtype=np.float32)
    store.put_embeddings("other", [first], vector)  # a re-embedding half-way (in id order)
    assert store.end_vector_models() == {"other", FakeEmbedder.name}
    store.put_embeddings("other", [last], vector)
    assert store.end_vector_models() == {"other"}


@pytest.mark.slow
def test_a_float_home_stays_float_under_auto_and_a_new_home_is_int8(tmp_path, capsys):
    """`backend = "auto"` (the default) never re-embeds a home behind the user's back: one
    imported with the float encoder adds new mail with it; a new home gets int8 vectors."""
    from assistant.cli import main
    from assistant.config import Settings
    from assistant.home import open_home
    from assistant.knowledge.db import open_db
    from assistant.knowledge.encoder import INT8_SUFFIX
    from assistant.knowledge.store import KnowledgeStore

    assert Settings().embedding.backend == "auto"
    boxes = [
        write_mbox(tmp_path / f"in{n}.mbox", [make_email(subject=f"tiles {n}", body=f"Batch {n}.")])
        for n in range(2)
    ]
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    (old / "config.toml").write_text('[embedding]\nbackend = "onnx"\n')
    assert main(["import", str(boxes[0]), "--home", str(old)]) == 0
    (old / "config.toml").unlink()  # back to the default, auto
    capsys.readouterr()
    assert main(["import", str(boxes[1]), "--home", str(old), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["embedded"] == 1  # the new mail only
    assert main(["import", str(boxes[0]), "--home", str(new)]) == 0
    capsys.readouterr()
    assert main(["search", "--home", str(old), "--mode", "dense", "--json", "tiles"]) == 0
    captured = capsys.readouterr()
    assert len(json.loads(captured.out)) == 2 and "no vector" not in captured.err

    def models(home):
        return KnowledgeStore(open_db(open_home(home).knowledge_db)).embedding_models()

    assert models(old) == {"all-MiniLM-L6-v2": 2}
    assert models(new) == {"all-MiniLM-L6-v2" + INT8_SUFFIX: 1}


@pytest.mark.slow
def test_a_home_switched_to_int8_is_re_embedded_never_mixed(tmp_path, capsys):
    """A home embedded by the float encoder, then `backend = "onnx-int8"`: its float vectors
    stay out of int8 searches, search says what to do, `assistant import` re-embeds."""
    from assistant.cli import main
    from assistant.knowledge.encoder import INT8_SUFFIX

    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('[embedding]\nbackend = "onnx"\n')
    mails = [make_email(subject=f"tiles {i}", body=f"Batch {i} of tiles.") for i in range(3)]
    box = write_mbox(tmp_path / "in.mbox", mails)
    assert main(["import", str(box), "--home", str(home)]) == 0
    (home / "config.toml").write_text('[embedding]\nbackend = "onnx-int8"\n')
    capsys.readouterr()

    assert main(["search", "--home", str(home), "--mode", "dense", "--json", "tiles"]) == 0
    captured = capsys.readouterr()
    err = " ".join(captured.err.split())
    assert json.loads(captured.out) == []  # float vectors are not searched with int8 ones
    assert f"3 of 3 chunks have no vector from the encoder all-MiniLM-L6-v2{INT8_SUFFIX}" in err
    assert "3 hold vectors of all-MiniLM-L6-v2," in err
    assert 're-embed them, or set [expert.embedding] backend = "onnx"' in err

    assert main(["import", "--home", str(home), "--json"]) == 0  # no path: re-embed
    assert json.loads(capsys.readouterr().out)["embedded"] == 3
    assert main(["search", "--home", str(home), "--mode", "dense", "--json", "tiles"]) == 0
    captured = capsys.readouterr()
    assert len(json.loads(captured.out)) == 3 and "no vector" not in captured.err


@pytest.mark.slow
def test_the_qa_bank_re_embeds_its_questions_when_the_backend_changes(encoders):
    from cache.db import open_cache_db
    from cache.qa_bank import QABank

    db = open_cache_db(None)
    question = TEXTS[0]
    before = QABank(db, 0.95, 1 << 20, embedder=encoders["onnx"])
    entry = before.add(question, encoders["onnx"].embed_batch([question])[0], "On 2 March.")
    after = QABank(db, 0.95, 1 << 20, embedder=encoders["onnx-int8"])
    int8 = encoders["onnx-int8"].embed_batch([question])[0]
    hit = after.lookup(int8)
    assert hit is not None and hit.entry.id == entry and hit.entry.answer == "On 2 March."
    np.testing.assert_allclose(after.vector(entry), int8, atol=1e-6)  # int8's, not float's
    assert after.encoder == encoders["onnx-int8"].name != before.encoder


@pytest.mark.slow
def test_one_text_per_run_on_each_core_gives_the_padded_batch_vectors(encoders):
    from assistant.knowledge.encoder import OnnxEmbedder

    onnx = encoders["onnx"]
    assert onnx.batch_size == 1 and onnx.threads == 1  # the default: nothing padded
    texts = TEXTS * 5
    batched = OnnxEmbedder(
        onnx.path, onnx.tokenizer_file, onnx.name, batch_size=8, workers=1, threads=2
    )
    parallel = OnnxEmbedder(onnx.path, onnx.tokenizer_file, onnx.name, workers=2)
    got = parallel.embed_batch(texts)
    np.testing.assert_allclose(got, batched.embed_batch(texts), atol=1e-5)
    np.testing.assert_allclose(got[:4], got[4:8], atol=1e-6)  # each row is its own text's


def _model_folder(path, weights: bytes):
    """A sentence-transformers folder as far as naming it goes (no model is loaded)."""
    path.mkdir(parents=True)
    (path / "modules.json").write_text("[]")
    (path / "model.safetensors").write_bytes(weights)
    return path


def test_another_model_in_a_folder_named_model_is_not_taken_for_the_shipped_one(tmp_path, store):
    from assistant.knowledge.embeddings import make_embedder, vectors_notice
    from assistant.knowledge.shipped import default_embedding_model

    shipped = make_embedder(EmbeddingSettings(backend="torch"))
    assert default_embedding_model().name == "model" and shipped.name == "all-MiniLM-L6-v2"
    before = FakeEmbedder()
    before.name = shipped.name  # a home embedded by the shipped model
    Importer(store, before).run([write_mbox(tmp_path / "in.mbox", [make_email(msgid="<m@x>")])])
    other = _model_folder(tmp_path / "bge-small" / "model", b"weights")
    configured = make_embedder(EmbeddingSettings(model_path=str(other), backend="torch"))
    assert configured.name == "minilm:bge-small"  # was the shipped model's name
    notice = vectors_notice(store, configured.name, "torch")  # was None: no re-embedding
    assert notice is not None and "Run `assistant import`" in notice


def test_models_of_one_size_side_by_side_each_get_their_own_export(tmp_path):
    import os

    from assistant.knowledge.encoder import _EXPORT_VERSION, onnx_file
    from assistant.knowledge.shipped import default_embedding_model

    encoders = tmp_path / "encoders"
    a = _model_folder(tmp_path / "models" / "a", b"weights of a")
    b = _model_folder(tmp_path / "models" / "b", b"weights of b")
    c = _model_folder(tmp_path / "other" / "a", b"weights of c")
    for backend in ("onnx", "onnx-int8"):
        folders = {onnx_file(m, encoders, backend).parent for m in (a, b, c)}
        assert len(folders) == 3  # a and b shared one: b embedded with a's weights
    before = onnx_file(a, encoders, "onnx")
    (a / "model.safetensors").write_bytes(b"weights of a, retrained")
    os.utime(a / "model.safetensors", ns=(1, 1))
    assert onnx_file(a, encoders, "onnx") != before  # a model replaced in place: a new export
    shipped = default_embedding_model()  # its export stays where `make setup` made it
    size = (shipped / "model.safetensors").stat().st_size
    want = encoders / f"{shipped.parent.name}-{size}-v{_EXPORT_VERSION}" / "model.onnx"
    assert onnx_file(shipped, encoders, "onnx") == want


def _mean_of_embeddings(path, width: int) -> None:
    """An ONNX encoder of the exported encoders' inputs and output whose vectors are `width`
    long: the mean of each token's row of a random table."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    table = np.random.default_rng(0).standard_normal((30522, width)).astype(np.float32)
    tokens = [
        helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "tokens"])
        for n in ("input_ids", "attention_mask", "token_type_ids")
    ]
    out = helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", width])
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["rows"]),
        helper.make_node("ReduceMean", ["rows"], ["sentence_embedding"], axes=[1], keepdims=0),
    ]
    graph = helper.make_graph(
        nodes, "mean", tokens, [out], [numpy_helper.from_array(table, "table")]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, str(path))


def test_a_model_whose_vectors_are_not_384_long_embeds(tmp_path):
    from assistant.knowledge.encoder import OnnxEmbedder
    from assistant.knowledge.shipped import default_embedding_model

    _mean_of_embeddings(tmp_path / "model.onnx", 768)  # a base-sized model's width
    tokenizer = default_embedding_model() / "tokenizer.json"
    encoder = OnnxEmbedder(tmp_path / "model.onnx", tokenizer, "minilm:base", workers=2)
    vectors = encoder.embed_batch(TEXTS)  # was: a shape mismatch, the import's traceback
    assert vectors.shape == (len(TEXTS), 768)
    assert np.allclose(vectors[0], encoder.embed_batch(TEXTS[:1])[0], atol=1e-5)
