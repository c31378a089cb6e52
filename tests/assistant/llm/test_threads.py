"""Background work takes every physical core while the user is away (LocalLLM.use_threads), and
the default threads once they are back; a user's question takes the cores other processes leave
free (LocalLLM.for_the_user); the logits do not depend on the thread count."""

from __future__ import annotations

import os

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


@pytest.mark.slow
def test_a_users_question_takes_the_free_cores_and_gives_them_back(monkeypatch):
    """for_the_user: every physical core other processes leave free, the background's choice
    back afterwards; with [llm] n_threads set, that count whatever the machine."""
    monkeypatch.setattr("assistant.llm.runtime.physical_cores", lambda: 2)
    llm = LocalLLM(default_llm_model(), n_ctx=256, n_threads=0)
    llm.eval(llm.tokenize("Bram's crew begins demolition on Monday.", first=True))
    ctx = llm._llm._ctx.ctx
    default = llama_cpp.llama_n_threads(ctx)
    assert default == max(1, (os.cpu_count() or 2) // 2)
    monkeypatch.setattr(llm.cores, "others", lambda: 0.0)  # a free machine
    with llm.for_the_user() as n:
        assert n == max(2, default) == llama_cpp.llama_n_threads(ctx)
    assert llama_cpp.llama_n_threads(ctx) == default
    monkeypatch.setattr(llm.cores, "others", lambda: 1.0)  # one core busy elsewhere
    with llm.for_the_user() as n:
        assert n == default == llama_cpp.llama_n_threads(ctx)
    set_by_user = LocalLLM(default_llm_model(), n_ctx=256, n_threads=1)
    set_by_user.eval(set_by_user.tokenize("Monday.", first=True))
    monkeypatch.setattr(set_by_user.cores, "others", lambda: 0.0)
    with set_by_user.for_the_user() as n:
        assert n == 1 == llama_cpp.llama_n_threads(set_by_user._llm._ctx.ctx)
