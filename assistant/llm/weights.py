"""The model's weights in the type its prompts are computed fastest in. llama.cpp multiplies a
prompt's batch through its fast matrix kernels (llamafile's sgemm) only for some weight types
(f32, f16, bf16, q8_0, q4_0); the shipped SmolLM2 is Q4_1, which takes the slower vector-dot
path: its prefill runs at about 0.6× the pace of the same weights in f16
(bench/results/weights.json). Since nearly all of a question's time, and of a night's, is
prefill, a small model quantised in another type is copied once to f16 by llama.cpp's own
requantiser (each weight dequantised, then stored in f16: the same model; its tokenizer and
chat template travel with it) into the user's cache, where the CPU has that path. The copy is
what is loaded and what the KV caches are keyed by. It is chosen by [expert.llm] weights =
"auto"; the default, "as-is", keeps the file as given: the same model's sentences come out a
little different in f16, and on the demo questions they confirmed more wrong quotes
(bench/results/funnel_weights.json).
"""

from __future__ import annotations

import ctypes
import logging
from pathlib import Path

from assistant.llm.model_file import (
    LLMError,
    Vocab,
    default_threads,
    interrupt_after,
    model_fingerprint,
)
from cache.files import replace_atomically

log = logging.getLogger(__name__)

WEIGHTS = ("auto", "as-is")
# llama_ftype values whose matrices llamafile's sgemm multiplies: f32, f16, q4_0, q8_0, bf16
FAST_TYPES = frozenset({0, 1, 2, 7, 32})
F16 = 1
# a model up to this many parameters is copied (its f16 file at most 1.2 GB); a larger one's
# answer is bound by reading its weights per token, which f16 would make slower
SMALL_PARAMS = 600_000_000


def default_weights_dir() -> Path:
    from platformdirs import user_cache_path

    return user_cache_path("mail-assistant", appauthor=False) / "models"


def prompt_weights(path: Path, weights: str = "auto", where: Path | None = None) -> Path:
    """The GGUF to load for `path`: its f16 copy where one pays (made the first time, kept in
    `where`), else `path` itself. Once decided, a start reads no more than the file's first
    megabyte (its fingerprint) and two names in `where`."""
    if weights not in WEIGHTS:
        raise LLMError(f"llm.weights: expected one of {', '.join(WEIGHTS)}, got {weights!r}")
    if weights == "as-is" or not path.is_file():
        return path  # a missing file is reported, with what to do, where it is loaded
    where = where or default_weights_dir()
    key = f"{path.stem}.{model_fingerprint(path)}"
    copy, kept = where / f"{key}.f16.gguf", where / f"{key}.as-is"
    if copy.is_file():
        return copy
    if kept.exists():
        return path
    try:
        pays = copy_pays(path)
    except LLMError:
        return path  # not a loadable model: loading it says so
    try:
        if not pays:
            where.mkdir(parents=True, exist_ok=True)
            kept.touch()
            return path
        replace_atomically(copy, lambda tmp: requantize(path, tmp, F16), suffix=".gguf")
    except (OSError, LLMError) as exc:
        log.warning("%s: kept as it is, its f16 copy could not be written in %s (%s)",
                    path, where, exc)  # fmt: skip
        return path
    log.info("%s: prompts computed from its f16 copy %s", path.name, copy)
    return copy


def copy_pays(path: Path) -> bool:
    """A small model in a weight type without the fast prompt kernels, on a CPU with them."""
    file_type, params = model_facts(path)
    return file_type not in FAST_TYPES and params <= SMALL_PARAMS and fast_kernels()


def model_facts(path: Path) -> tuple[int, int]:
    """The GGUF's weight type (llama_ftype) and parameter count, read without its weights."""
    return Vocab(path).facts()


def fast_kernels() -> bool:
    """llama.cpp was built with llamafile's sgemm and the CPU runs its f16 kernels (x86 with
    AVX2 and F16C, or ARM with NEON's f16 arithmetic)."""
    from llama_cpp import llama_cpp as C

    info = C.llama_print_system_info().decode(errors="replace").replace(" ", "")
    if "LLAMAFILE=1" not in info:
        return False
    x86 = "AVX2=1" in info and "F16C=1" in info
    arm = "NEON=1" in info and "FP16_VA=1" in info
    return x86 or arm


def requantize(source: Path, target: Path, file_type: int) -> None:
    """llama.cpp's quantiser: `source`'s weights in `file_type`, metadata and vocabulary kept
    (its line per tensor is not shown: llama-cpp-python's log relays errors only
    meanwhile)."""
    from llama_cpp import _logger
    from llama_cpp import llama_cpp as C

    params = C.llama_model_quantize_default_params()
    params.ftype = file_type
    params.allow_requantize = True
    params.nthread = default_threads()
    level = _logger.logger.level
    _logger.logger.setLevel(logging.ERROR)
    try:
        with interrupt_after():
            failed = C.llama_model_quantize(str(source).encode(), str(target).encode(),
                                            ctypes.byref(params))  # fmt: skip
    finally:
        _logger.logger.setLevel(level)
    if failed:
        raise LLMError(f"{source}: llama.cpp could not requantize it (code {failed})")
