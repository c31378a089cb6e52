"""Ctrl-C while llama.cpp loads a model stops the command. llama.cpp logs through a Python
callback while it loads; a SIGINT handled there raised KeyboardInterrupt inside the callback,
where ctypes printed "Exception ignored on calling ctypes callback function" and dropped it:
the answer went on and `assistant ask` exited 0. The callbacks here press Ctrl-C (a real
SIGINT) from inside llama.cpp's log, at the worst moment."""

from __future__ import annotations

import ctypes
import os
import signal
from collections.abc import Iterator

import pytest

from assistant.llm import model_file, mover
from assistant.llm.model_file import Vocab, default_llm_model, load_llama


@pytest.fixture
def ctrl_c_in_the_log() -> Iterator[list[int]]:
    """llama.cpp's log callback, for the test: the first line it logs sends this process a
    SIGINT (handled, as a user's Ctrl-C is, while Python runs the callback). Yields the count
    of signals sent."""
    import llama_cpp
    from llama_cpp import _logger

    sent: list[int] = []

    @llama_cpp.llama_log_callback
    def press(level: int, text: bytes, user_data) -> None:
        if not sent:
            sent.append(1)
            os.kill(os.getpid(), signal.SIGINT)

    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    llama_cpp.llama_log_set(press, ctypes.c_void_p(0))
    try:
        yield sent
    finally:
        llama_cpp.llama_log_set(mover._relay or _logger.llama_log_callback, ctypes.c_void_p(0))
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.slow
def test_ctrl_c_while_the_model_loads_stops_after_the_load(ctrl_c_in_the_log):
    with pytest.raises(KeyboardInterrupt):
        load_llama(default_llm_model(), 256, 1)
    assert ctrl_c_in_the_log == [1]


def test_ctrl_c_while_the_tokenizer_loads_is_not_lost(ctrl_c_in_the_log):
    with pytest.raises(KeyboardInterrupt):
        Vocab(default_llm_model())
    assert ctrl_c_in_the_log == [1]


def test_without_ctrl_c_nothing_is_raised_and_the_handler_comes_back():
    with model_file.interrupt_after():
        pass
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    seen = []
    signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))
    try:
        with model_file.interrupt_after():
            os.kill(os.getpid(), signal.SIGINT)
            assert seen == []  # noted only: the handler runs after the block
        assert seen == [signal.SIGINT]
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
