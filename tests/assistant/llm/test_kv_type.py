"""[llm] kv_type: a q8_0 (q4_0) KV cache stores about half (a quarter of) the bytes per token,
restores to the logits it computed (exact reuse stays exact), and its KV is never taken for
another type's KV (another fingerprint)."""

from __future__ import annotations

import numpy as np
import pytest

from assistant.config import ConfigError, load_settings
from assistant.llm.model_file import default_llm_model, model_fingerprint
from assistant.llm.runtime import LocalLLM

TEXT = "Bram's crew begins demolition of the kitchen on Monday 2 March at 8:00. " * 4


def test_kv_type_is_checked(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[expert.llm]\nkv_type = "q2_k"\n')
    with pytest.raises(ConfigError, match="llm.kv_type: expected f16, q8_0 or q4_0"):
        load_settings(cfg, env={})
    assert load_settings(None, env={"ASSISTANT_LLM_KV_TYPE": "q8_0"}).llm.kv_type == "q8_0"


def test_each_kv_type_has_its_own_fingerprint_and_f16_keeps_the_old_one():
    path = default_llm_model()
    f16 = model_fingerprint(path, 1024)
    assert model_fingerprint(path, 1024, "f16") == f16
    assert model_fingerprint(path, 1024, "q8_0") != f16
    assert model_fingerprint(path, 1024, "q4_0") not in (f16, model_fingerprint(path, 1024, "q8_0"))


@pytest.mark.slow
def test_quantised_kv_is_smaller_and_restores_exactly():
    sizes = {}
    for kv_type in ("f16", "q8_0", "q4_0"):
        llm = LocalLLM(default_llm_model(), n_ctx=512, n_threads=1, kv_type=kv_type)
        tokens, question = llm.tokenize(TEXT, first=True), llm.tokenize(" When?")
        llm.eval(tokens)
        blob = llm.save_range(0, len(tokens))
        llm.eval(question)
        computed = llm.logits()
        sizes[kv_type] = len(blob) / len(tokens)
        llm.restore_ranges([blob], tokens)
        llm.eval(question)
        np.testing.assert_array_equal(llm.logits(), computed)
    assert sizes["q8_0"] < 0.6 * sizes["f16"]
    assert sizes["q4_0"] < 0.35 * sizes["f16"]
