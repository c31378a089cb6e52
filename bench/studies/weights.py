"""How fast the model computes a prompt and a token from each weight type (llm/weights.py): the
shipped SmolLM2 file (Q4_1) against its f16 copy, which [expert.llm] weights = "auto" loads, and
two more requantisations of it for reference (q8_0, q4_0: not lossless). Prefill: 512 tokens of
real mail in pieces of 64 (as a night's node is computed), best of 3; decode: 32 single tokens.
On 1 and 2 threads, one model at a time, the same tokens for all.

    python bench/studies/weights.py [--out weights]
"""

from __future__ import annotations

import argparse
import gzip
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

from _common import default_eval_dir, log, print_table, write_results  # noqa: E402

PIECE = 64
TOKENS = 512
DECODED = 32


def timed(path: Path, threads: int, text: str) -> dict:
    from assistant.llm.model_file import load_llama

    llm = load_llama(path, 4096, threads)
    tokens = llm.tokenize(text.encode())[:TOKENS]
    best = float("inf")
    for _ in range(3):
        llm.reset()  # the next eval drops the KV past it
        start = time.perf_counter()
        for i in range(0, len(tokens), PIECE):
            llm.eval(tokens[i : i + PIECE])
        best = min(best, time.perf_counter() - start)
    start = time.perf_counter()
    for token in tokens[:DECODED]:
        llm.eval([token])
    decode = (time.perf_counter() - start) / DECODED
    return {"prefill_tok_s": round(len(tokens) / best, 1), "decode_tok_s": round(1 / decode, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    parser.add_argument("--out", default="weights")
    args = parser.parse_args()
    from llama_cpp import llama_cpp as C

    from assistant.llm.model_file import default_llm_model
    from assistant.llm.weights import fast_kernels, prompt_weights, requantize

    with gzip.open(args.eval_dir / "mail" / "skilling-j.mbox.gz", "rt", errors="replace") as f:
        text = f.read(400_000)[100_000:104_000]
    shipped = default_llm_model()
    work = Path(tempfile.mkdtemp(prefix="weights-"))
    models = {"shipped q4_1": shipped, "f16 copy (auto)": prompt_weights(shipped, "auto", work)}
    others = (("q8_0", C.LLAMA_FTYPE_MOSTLY_Q8_0), ("q4_0", C.LLAMA_FTYPE_MOSTLY_Q4_0))
    for name, file_type in others:
        models[name] = work / f"{name}.gguf"
        requantize(shipped, models[name], file_type)
    rows, cells = [], []
    for threads in (1, 2):
        base = None
        for name, path in models.items():
            got = timed(path, threads, text)
            base = base or got
            ratio = got["prefill_tok_s"] / base["prefill_tok_s"]
            cells.append({"threads": threads, "weights": name, **got, "prefill_vs_shipped": ratio})
            rows.append([threads, name, got["prefill_tok_s"], f"{ratio:.2f}", got["decode_tok_s"]])
            log(f"{threads} threads, {name}: {got}")
    columns = ["threads", "weights", "prefill tok/s", "× shipped", "decode tok/s"]
    print_table("prefill and decode by weight type (SmolLM2-135M)", columns, rows)
    write_results(args.out, {"fast_kernels": fast_kernels(), "cells": cells}, vars(args))


if __name__ == "__main__":
    main()
