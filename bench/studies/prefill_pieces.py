"""Whether a night's chunk node gets cheaper with bigger llama eval pieces (issue 33: "batch the
prefill of several chunks where llama.cpp allows"): prefill tokens per second of one real chunk
of mail (256 tokens after a 60-token system prompt), evaluated in pieces of 32 (PIECE, what a
background job checks a waiting user between), 64, 128 and 256 tokens, on 1 and 2 threads, with
f16 and q8_0 KV. Best of 3 per cell; the real model, loaded as the app loads it
(llm/model_file.load_llama).

    python bench/studies/prefill_pieces.py [--out prefill_pieces]
"""

from __future__ import annotations

import argparse
import gzip
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

from _common import default_eval_dir, log, print_table, write_results  # noqa: E402

PIECES = (32, 64, 128, 256)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    parser.add_argument("--out", default="prefill_pieces")
    args = parser.parse_args()
    from assistant.llm.model_file import default_llm_model, load_llama

    mbox = args.eval_dir / "mail" / "skilling-j.mbox.gz"
    with gzip.open(mbox, "rt", errors="replace") as f:
        text = f.read(400_000)
    rows, cells = [], []
    for threads in (1, 2):
        for kv in ("f16", "q8_0"):
            llm = load_llama(default_llm_model(), 4096, threads, kv)
            tokens = llm.tokenize(text.encode())
            system, chunk = tokens[:60], tokens[1000:1256]
            rates = []
            for piece in PIECES:
                best = float("inf")
                for _ in range(3):
                    llm.reset()
                    llm.eval(system)
                    start = time.perf_counter()
                    for i in range(0, len(chunk), piece):
                        llm.eval(chunk[i : i + piece])
                    best = min(best, time.perf_counter() - start)
                rates.append(round(len(chunk) / best, 1))
                cells.append({"threads": threads, "kv": kv, "piece": piece,
                              "tokens_per_s": rates[-1]})  # fmt: skip
            log(f"{threads} thread(s), {kv}: {rates}")
            rows.append([f"{threads} thread(s), {kv}", *rates])
            del llm
    print_table("prefill tokens/s by eval piece size", ["", *map(str, PIECES)], rows)
    path = write_results(args.out, {"cells": cells, "chunk_tokens": 256}, vars(args))
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
