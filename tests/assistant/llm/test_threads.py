"""Background work takes every physical core while the user is away (LocalLLM.use_threads), and
the default threads once they are back; the logits do not depend on the thread count."""

from __future__ import annotations

import llama_cpp
import numpy as np
import pytest

from assistant.llm.model_file import default_llm_model, physical_cores
from assistant.llm.runtime import LocalLLM

CPUINFO = "".join(
    f"processor\t: {i}\nphysical id\t: {i // 4}\ncore id\t\t: {(i % 4) // 2}\n\n" for i in range(8)
)  # two sockets, two cores each, two hyper-threads per core


def test_physical_cores_counts_sockets_and_cores_not_hyper_threads(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text(CPUINFO)
    assert physical_cores(info) == 4
    assert physical_cores(tmp_path / "missing") >= 1


@pytest.mark.slow
def test_use_threads_switches_the_loaded_context_and_back():
    llm = LocalLLM(default_llm_model(), n_ctx=256, n_threads=1)
    tokens = llm.tokenize("Bram's crew begins demolition on Monday.", first=True)
    llm.eval(tokens)
    one = np.array(llm.logits())
    ctx = llm._llm._ctx.ctx
    assert llama_cpp.llama_n_threads(ctx) == 1
    llm.use_threads(2)
    assert llama_cpp.llama_n_threads(ctx) == llama_cpp.llama_n_threads_batch(ctx) == 2
    llm.reset()
    llm.eval(tokens)
    assert np.allclose(np.array(llm.logits()), one, atol=1e-3)
    llm.use_threads(None)
    assert llama_cpp.llama_n_threads(ctx) == 1
