"""A local GGUF model through llama-cpp-python: segment-wise prefill, greedy and contrastive
streaming, and per-token log-probabilities of a given continuation; the KV of a prompt's ranges
(saved, restored, placed, filled, computed again) is kv_ranges.py's part of it.

Prompts are evaluated one segment at a time (system, chunk 1, chunk 2, …, question), each
tokenized on its own. A prefix restored from the cache therefore holds exactly the tokens and the
KV values an uncached run computes, and the suffix is evaluated in the same batches: the output
with a cache hit equals the output without it, token for token.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from assistant.config_sections import LLMSettings
from assistant.llm.cores import CoreWatch, background_threads, load, question_threads
from assistant.llm.decoding import log_softmax_of, pick
from assistant.llm.kv_ranges import KVRanges
from assistant.llm.model_file import (
    LLMError,
    default_llm_model,
    default_threads,
    kv_name,
    load_llama,
    physical_cores,
)
from assistant.llm.mover import SideMover, fill_batch
from assistant.llm.weights import prompt_weights

if TYPE_CHECKING:
    from llama_cpp import Llama


def make_llm(settings: LLMSettings) -> LocalLLM:
    """The configured model (the shipped one by default); with [expert.llm] weights = "auto",
    from its f16 copy where that computes prompts faster (llm/weights.py)."""
    path = Path(settings.model_path).expanduser() if settings.model_path else default_llm_model()
    path = prompt_weights(path, settings.weights)
    return LocalLLM(path, settings.n_ctx, settings.n_threads, settings.kv_type)


class LocalLLM(KVRanges):
    """The model, loaded when first used: a one-shot `ask` that the QA bank answers never
    loads it (its fingerprint comes from the file)."""

    def __init__(
        self, model_path: Path, n_ctx: int = 4096, n_threads: int = 0, kv_type: str = "f16"
    ) -> None:
        if not model_path.is_file():
            raise LLMError(f"{model_path}: model file not found; fix [llm] model_path")
        self.path = model_path
        self.name = model_path.name
        self.fingerprint = kv_name(model_path, n_ctx, kv_type)  # the model and llama.cpp's build
        self.lock = threading.RLock()  # one user of the model at a time
        self.move_aside = True  # False: `moved` moves nothing (the prompt's context will)
        self._params = (n_ctx, n_threads or default_threads(), kv_type)
        self._set_threads = n_threads > 0  # [llm] n_threads set: every question uses it
        self._loaded: Llama | None = None
        self._threads: int | None = None  # use_threads: None is the default
        self.cores = CoreWatch()  # what other processes use, for a question's threads

    @property
    def _llm(self) -> Llama:
        if self._loaded is None:
            with self.lock:
                if self._loaded is None:
                    self._loaded = self._load()
        return self._loaded

    def _load(self) -> Llama:
        n_ctx, threads, kv_type = self._params
        llm = load_llama(self.path, n_ctx, threads, kv_type)
        self._mover = SideMover(llm)
        if self._threads and self._threads != threads:
            llm._ctx.set_n_threads(self._threads, self._threads)
        return llm

    def use_threads(self, n: int | None) -> None:
        """Evaluate with `n` threads from the next call (None: the default): background work
        takes every physical core while the user is away, and gives them back on return."""
        with self.lock:
            self._threads = n
            if self._loaded is not None:
                now = n or self._params[1]
                self._loaded._ctx.set_n_threads(now, now)

    @property
    def default_threads(self) -> int:
        """[llm] n_threads, or half the logical cores where it is not set."""
        return self._params[1]

    def for_background(self, away: bool) -> None:
        """Background work's threads, before each job: the physical cores other processes
        leave free while the user is away, else the default (llm/cores.py)."""
        others = self.cores.others() if away else None
        n = background_threads(away, physical_cores(), self._params[1], others, load())
        self.use_threads(n)

    @contextmanager
    def for_the_user(self) -> Iterator[int]:
        """A question the user waits for: evaluate on every physical core other processes
        leave free (llm/cores.py), never on fewer threads than the default; what background
        work had set comes back after. Holds the model. Yields the threads used."""
        with self.lock:
            before, default = self._threads, self._params[1]
            others = None if self._set_threads else self.cores.others()
            n = question_threads(physical_cores(), default, others)
            self.use_threads(n)
            try:
                yield n
            finally:
                self.use_threads(before)
                self.cores.look()  # the next question measures the pause before it

    @property
    def chat_template(self) -> str | None:
        return self._llm.metadata.get("tokenizer.chat_template")

    # -- tokens -------------------------------------------------------------------------------

    @property
    def n_ctx(self) -> int:
        return self._llm.n_ctx()

    @property
    def eos(self) -> int:
        return self._llm.token_eos()

    def tokenize(self, text: str, first: bool = False) -> list[int]:
        """Tokens of one segment; `first` adds BOS where the model wants one."""
        return self._llm.tokenize(text.encode("utf-8"), add_bos=first, special=True)

    def detokenize(self, tokens: Sequence[int]) -> bytes:
        return self._llm.detokenize(list(tokens))

    def is_end(self, token: int) -> bool:
        from llama_cpp import llama_cpp as C

        return bool(C.llama_vocab_is_eog(self._llm._model.vocab, token))

    # -- evaluation ---------------------------------------------------------------------------

    @property
    def n_past(self) -> int:
        return self._llm.n_tokens

    def held_tokens(self) -> list[int]:
        """The tokens whose KV the prompt's sequence holds, in order."""
        return [int(t) for t in self._llm.input_ids[: self._llm.n_tokens]]

    def reset(self) -> None:
        self._llm.reset()
        self._llm._ctx.kv_cache_seq_rm(-1, 0, -1)

    def truncate(self, n: int) -> None:
        """Keep the prompt's first `n` tokens (and their KV); drop the rest and every scratch
        sequence."""
        self._llm._ctx.kv_cache_seq_rm(0, n, -1)
        self._llm._ctx.kv_cache_seq_rm(1, -1, -1)
        self._llm.n_tokens = min(n, self._llm.n_tokens)

    def eval(self, tokens: Sequence[int]) -> None:
        self._check_room(len(tokens))
        self._llm.eval(list(tokens))

    def _check_room(self, n_tokens: int, at: int | None = None) -> None:
        """LLMError unless `n_tokens` more fit in the context, after n_past or from `at`."""
        end = (self.n_past if at is None else at) + n_tokens
        if end > self.n_ctx:
            raise LLMError(f"prompt of {end} tokens exceeds n_ctx {self.n_ctx}")

    def logits(self) -> np.ndarray:
        """Logits after the last evaluated token."""
        ptr = self._llm._ctx.get_logits_ith(-1)
        return np.ctypeslib.as_array(ptr, shape=(self._llm.n_vocab(),)).copy()

    def greedy(
        self, max_tokens: int, banned: Callable[[list[int]], set[int]] | None = None
    ) -> Iterator[int]:
        """Temperature-0 decoding from the current state, one token at a time; `banned(tokens so
        far)` names tokens that may not come next."""
        tokens: list[int] = []
        for _ in range(max_tokens):
            if self.n_past >= self.n_ctx:
                return
            token = pick(self.logits(), banned, tokens)
            tokens.append(token)
            if self.is_end(token):
                return
            yield token
            self.eval([token])

    def contrastive(
        self,
        max_tokens: int,
        plain: Sequence[int],
        alpha: float,
        banned: Callable[[list[int]], set[int]] | None = None,
    ) -> Iterator[int]:
        """Context-aware decoding (Shi et al. 2023): greedy over (1 + α)·logits(state) −
        α·logits(plain), where `plain` is the prompt without its context, kept in the scratch
        sequence (1) and extended by each chosen token alongside the prompt (one batch of two a
        step). It favours what the context says over what the model would say without it."""
        from llama_cpp import llama_cpp as C
        from llama_cpp._internals import LlamaBatch

        llm, memory = self._llm, C.llama_get_memory(self._llm._ctx.ctx)
        batch = LlamaBatch(n_tokens=max(len(plain), 2), embd=0, n_seq_max=2, verbose=False)
        try:
            with_context = self.logits()
            without = self._decode_rows(batch, [(t, 1, i) for i, t in enumerate(plain)])[-1]
            tokens: list[int] = []
            for _ in range(max_tokens):
                if self.n_past + len(plain) + len(tokens) >= self.n_ctx:
                    return
                token = pick((1 + alpha) * with_context - alpha * without, banned, tokens)
                if self.is_end(token):
                    return
                tokens.append(token)
                yield token
                rows = [(token, 0, self.n_past), (token, 1, len(plain) + len(tokens) - 1)]
                with_context, without = self._decode_rows(batch, rows)
                llm.input_ids[llm.n_tokens] = token
                llm.n_tokens += 1
        finally:
            C.llama_memory_seq_rm(memory, 1, -1, -1)
            batch.close()

    def _decode_rows(self, batch, rows: Sequence[tuple[int, int, int]]) -> list[np.ndarray]:
        """Decode (token, sequence, position) rows in one batch; the logits of the last row of
        each sequence, in order of appearance."""
        llm = self._llm
        last = {seq: i for i, (_, seq, _) in enumerate(rows)}
        fill_batch(batch, rows, set(last.values()))
        llm._ctx.decode(batch)
        n_vocab = llm.n_vocab()
        return [
            np.ctypeslib.as_array(llm._ctx.get_logits_ith(i), shape=(n_vocab,)).copy()
            for i in sorted(last.values())
        ]

    def eval_logprobs(self, tokens: Sequence[int], first_scored: int = 1) -> np.ndarray:
        """Evaluate `tokens` and return log p(tokens[i] | state, tokens[:i]) for i from
        `first_scored` (≥ 1) on. One forward pass per batch (`continuation_logprobs` needs one
        per token), and logits only at the positions scored: with a 262k vocabulary the LM head
        would otherwise cost more than the layers."""
        if not 1 <= first_scored < len(tokens) + 1:
            raise ValueError(f"first_scored {first_scored} outside 1..{len(tokens)}")
        self._check_room(len(tokens))
        llm = self._llm
        llm._ctx.kv_cache_seq_rm(-1, llm.n_tokens, -1)
        rows: list[np.ndarray] = []
        for i in range(0, len(tokens), llm.n_batch):
            batch = list(tokens[i : i + llm.n_batch])
            llm._batch.set_batch(batch=batch, n_past=llm.n_tokens, logits_all=False)
            wanted = [j for j in range(len(batch)) if first_scored - 1 <= i + j < len(tokens) - 1]
            for j in range(len(batch)):
                llm._batch.batch.logits[j] = j in wanted
            llm._ctx.decode(llm._batch)
            if wanted:
                shape = (len(wanted), llm.n_vocab())
                rows.append(np.ctypeslib.as_array(llm._ctx.get_logits(), shape=shape).copy())
            llm.input_ids[llm.n_tokens : llm.n_tokens + len(batch)] = batch
            llm.n_tokens += len(batch)
        return log_softmax_of(np.concatenate(rows), tokens[first_scored:])

    def continuation_logprobs(self, tokens: Sequence[int]) -> np.ndarray:
        """log p(tokens[i] | state, tokens[:i]) for each i, from the current state (which must
        hold at least one token); leaves the state extended by `tokens`."""
        out = np.empty(len(tokens), dtype=np.float64)
        for i, token in enumerate(tokens):
            out[i] = log_softmax_of(self.logits()[None, :], [token])[0]
            self.eval([token])
        return out
