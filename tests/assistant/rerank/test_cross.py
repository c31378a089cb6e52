"""Cross-encoder reranking: the folder check, the scorer, and the mode wiring (a tiny random
cross-encoder: mechanics only)."""

from __future__ import annotations

import json
import shutil
from types import SimpleNamespace

import numpy as np
import pytest

from assistant.config import ConfigError, Settings
from assistant.knowledge.embeddings import default_embedding_model
from assistant.knowledge.retrieval import Hit
from assistant.rerank.cross import CrossScorer, check_folder
from assistant.rerank.loader import check_mode, make_reranker

QUESTION = "when does the kitchen work start"
PASSAGES = [
    "The kitchen demolition starts on Monday 2 March.",
    "My half marathon time was 1:52:10.",
    "We chose Mosa tiles in Warm Grey for the kitchen floor and the hallway.",
    "Invoice 442 is due at the end of the month.",
    "ok",
]


def test_a_cross_encoder_folder_passes_the_check(tiny_cross):
    config = check_folder(str(tiny_cross))
    assert config["architectures"] == ["BertForSequenceClassification"]


def test_an_embedding_model_is_named_as_not_a_cross_encoder():
    folder = default_embedding_model()
    with pytest.raises(ConfigError, match="not a cross-encoder") as err:
        check_folder(str(folder))
    assert str(folder) in str(err.value) and "BertModel" in str(err.value)


def test_missing_parts_are_named(tiny_cross, tmp_path):
    with pytest.raises(ConfigError, match="not a folder"):
        check_folder(str(tmp_path / "nowhere"))
    copy = shutil.copytree(tiny_cross, tmp_path / "copy")
    (copy / "model.safetensors").unlink()
    with pytest.raises(ConfigError, match="no weights file"):
        check_folder(str(copy))
    config = json.loads((copy / "config.json").read_text())
    config["id2label"] = {"0": "no", "1": "yes"}
    (copy / "config.json").write_text(json.dumps(config))
    with pytest.raises(ConfigError, match="2 labels"):
        check_folder(str(copy))
    (copy / "config.json").unlink()
    with pytest.raises(ConfigError, match=f"{copy}: no config.json"):
        check_folder(str(copy))


def test_modes_that_cannot_run_on_the_model_are_config_errors(tiny_cross):
    settings = Settings()
    settings.rerank = "cross"  # on the default GGUF name
    with pytest.raises(ConfigError, match="smollm2-135m: not a folder"):
        check_mode(settings)
    settings.rerank, settings.reranker.model = "full", str(tiny_cross)
    with pytest.raises(ConfigError, match="cross-encoder folder use rerank"):
        check_mode(settings)


def hits(texts: list[str]) -> list[Hit]:
    fused = np.linspace(1.0, 0.1, len(texts))
    return [Hit(i, float(s), None, None, SimpleNamespace(text=t)) for i, (t, s) in
            enumerate(zip(texts, fused, strict=True))]  # fmt: skip


def test_cross_orders_by_the_cross_encoder_logits(tiny_cross, tmp_path):
    settings = Settings()
    settings.rerank, settings.reranker.model = "cross", str(tiny_cross)
    reranker = make_reranker(settings, tmp_path, blobs=None)
    assert reranker.available == ["cross", "cross-pruned"]
    logits = CrossScorer(str(tiny_cross)).scores(QUESTION, PASSAGES)
    chosen = reranker.rerank(QUESTION, hits(PASSAGES), 3)
    assert [h.chunk_id for h in chosen] == list(np.argsort(-logits, kind="stable")[:3])


def test_check_runs_between_batches(tiny_cross):
    calls = []
    scorer = CrossScorer(str(tiny_cross))
    scorer.scores(QUESTION, PASSAGES * 4, check=lambda: calls.append(1))
    assert len(calls) == 3  # 20 pairs in batches of 8


def test_pruned_query_likelihood_is_no_longer_a_mode_and_says_why():
    from assistant.config import load_settings

    with pytest.raises(ConfigError, match="pruned query likelihood saves nothing"):
        load_settings(None, env={"ASSISTANT_RERANK": "pruned"})
