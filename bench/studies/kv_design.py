"""KV-tree storage designs, side by side on SmolLM2 (issue 3, Deliver 2).

(a) one blob per tree node holding the whole prefix state (llama_state_seq_get_data of seq 0);
(b) one blob per node holding only that segment's positions: copy the range into a scratch
    sequence with llama_memory_seq_cp and save that; restore by loading each blob of the path
    into the scratch sequence and copying it back into seq 0 (needs n_seq_max > 1 and a unified
    KV cache, which llama_cpp.Llama sets only in embedding mode: this bench builds its context).
Both are checked against an uncached run: logits after the question must be identical.
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

from _common import log, print_table, write_results  # noqa: E402

from assistant.config_sections import LLMSettings  # noqa: E402
from assistant.llm.model_file import default_llm_model  # noqa: E402


class Runner:
    """A bare llama.cpp context with a scratch sequence (seq 1) beside the prompt (seq 0)."""

    def __init__(self, n_ctx: int, threads: int) -> None:
        from llama_cpp import Llama
        from llama_cpp import llama_cpp as C
        from llama_cpp._internals import LlamaBatch, LlamaContext

        self.C = C
        # the model and its tokenizer; the context that is measured is built below
        self.llm = Llama(str(default_llm_model()), n_ctx=64, n_threads=threads, verbose=False)
        params = C.llama_context_default_params()
        params.n_ctx, params.n_batch, params.n_ubatch = n_ctx, 512, 512
        params.n_seq_max, params.kv_unified = 2, True
        params.n_threads = params.n_threads_batch = threads
        self.ctx = LlamaContext(model=self.llm._model, params=params, verbose=False)
        self.batch = LlamaBatch(n_tokens=512, embd=0, n_seq_max=1, verbose=False)
        self.mem = C.llama_get_memory(self.ctx.ctx)

    def tokenize(self, text: str, first: bool = False) -> list[int]:
        return self.llm.tokenize(text.encode(), add_bos=first, special=True)

    def eval(self, tokens: list[int], pos: int) -> np.ndarray:
        for i in range(0, len(tokens), 512):
            self.batch.set_batch(tokens[i : i + 512], n_past=pos + i, logits_all=False)
            self.ctx.decode(self.batch)
        ptr = self.ctx.get_logits_ith(-1)
        return np.ctypeslib.as_array(ptr, shape=(self.llm.n_vocab(),)).copy()

    def clear(self) -> None:
        self.C.llama_memory_clear(self.mem, True)

    def save(self, seq: int) -> bytes:
        size = self.C.llama_state_seq_get_size(self.ctx.ctx, seq)
        buf = (ctypes.c_uint8 * size)()
        written = self.C.llama_state_seq_get_data(self.ctx.ctx, buf, size, seq)
        return bytes(buf)[:written]

    def load(self, blob: bytes, seq: int) -> None:
        buf = (ctypes.c_uint8 * len(blob)).from_buffer_copy(blob)
        if self.C.llama_state_seq_set_data(self.ctx.ctx, buf, len(blob), seq) != len(blob):
            raise RuntimeError("state did not load")

    def save_range(self, start: int, end: int) -> bytes:
        """Design (b): the KV of positions [start, end) of seq 0 alone."""
        self.C.llama_memory_seq_cp(self.mem, 0, 1, start, end)
        blob = self.save(1)
        self.C.llama_memory_seq_rm(self.mem, 1, -1, -1)
        return blob

    def load_ranges(self, blobs: list[bytes]) -> None:
        for blob in blobs:
            self.load(blob, 1)
            self.C.llama_memory_seq_cp(self.mem, 1, 0, -1, -1)
            self.C.llama_memory_seq_rm(self.mem, 1, -1, -1)


def segments(r: Runner, chunks: int, words: int) -> tuple[list[list[int]], list[int]]:
    system = r.tokenize("<|im_start|>system\nAnswer from the context.\n\nContext:\n", first=True)
    body = [
        r.tokenize(
            " ".join(
                f"Mail {i} word{j % 97} about kitchens and batteries." for j in range(words // 6)
            )
            + "\n\n"
        )
        for i in range(chunks)
    ]
    question = r.tokenize(
        "<|im_end|>\n<|im_start|>user\nWhat did mail 1 say?<|im_end|>\n<|im_start|>assistant\n"
    )
    return [system, *body], question


def trial(r: Runner, segs: list[list[int]], question: list[int]) -> dict[str, Any]:
    r.clear()
    pos, a_blobs, b_blobs = 0, [], []
    for seg in segs:
        r.eval(seg, pos)
        a_blobs.append(r.save(0))
        b_blobs.append(r.save_range(pos, pos + len(seg)))
        pos += len(seg)
    reference = r.eval(question, pos)
    r.clear()
    t0 = time.perf_counter()
    r.load(a_blobs[-1], 0)
    a_ms = (time.perf_counter() - t0) * 1000
    a_diff = float(np.abs(r.eval(question, pos) - reference).max())
    r.clear()
    t0 = time.perf_counter()
    r.load_ranges(b_blobs)
    b_ms = (time.perf_counter() - t0) * 1000
    b_diff = float(np.abs(r.eval(question, pos) - reference).max())
    r.clear()  # partial path: system + first chunk restored, the rest evaluated
    r.load_ranges(b_blobs[:2])
    p = len(segs[0]) + len(segs[1])
    for seg in segs[2:]:
        r.eval(seg, p)
        p += len(seg)
    partial_diff = float(np.abs(r.eval(question, pos) - reference).max())
    return {
        "prompt_tokens": pos,
        "a_bytes": sum(map(len, a_blobs)),
        "b_bytes": sum(map(len, b_blobs)),
        "a_restore_ms": a_ms,
        "b_restore_ms": b_ms,
        "a_max_abs_diff": a_diff,
        "b_max_abs_diff": b_diff,
        "b_partial_max_abs_diff": partial_diff,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, nargs="+", default=[1, 3, 5])
    parser.add_argument("--words", type=int, default=150, help="words per chunk")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    runner = Runner(n_ctx=4096, threads=LLMSettings().n_threads or 2)
    results = []
    for n in args.chunks:
        log(f"{n} chunk(s)")
        segs, question = segments(runner, n, args.words)
        runs = [trial(runner, segs, question) for _ in range(args.repeats)]
        row = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        results.append({"chunks": n, **row})
    rows = [
        (
            r["chunks"],
            r["prompt_tokens"],
            r["a_bytes"] / 2**20,
            r["b_bytes"] / 2**20,
            r["a_bytes"] / r["b_bytes"],
            r["a_restore_ms"],
            r["b_restore_ms"],
            max(r["a_max_abs_diff"], r["b_max_abs_diff"], r["b_partial_max_abs_diff"]),
        )
        for r in results
    ]
    print_table(
        "KV tree designs: (a) whole prefix per node vs (b) the node's own positions",
        [
            "chunks",
            "prefix tokens",
            "(a) MiB/path",
            "(b) MiB/path",
            "(a)/(b)",
            "(a) restore ms",
            "(b) restore ms",
            "max |logit diff|",
        ],
        rows,
        note="bytes: every node on one path stored (what partial-prefix reuse needs); restore: "
        "the full path; diff vs an uncached run, (b) also for a partial path",
    )
    write_results("kv_design", {"results": results}, vars(args))


if __name__ == "__main__":
    main()
