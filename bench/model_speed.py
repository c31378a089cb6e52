"""Each shipped model's prefill and decode speed on this machine, side by side in one run (the
figures `assistant model --measure` keeps, and the README's costs of each choice): a 256-token
prompt of mail-like text computed in one batch, then 32 tokens decoded, on 1 and 2 threads.

    python bench/model_speed.py [--threads 1,2] [--out model_speed]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import print_table, write_results  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--models", default="smollm2-135m,qwen2.5-coder-0.5b,qwen2.5-coder-1.5b")
    parser.add_argument("--out", default="model_speed")
    args = parser.parse_args()
    from assistant.cli.commands_model import time_model
    from assistant.llm.models import model_path
    from assistant.llm.weights import default_weights_dir

    results, rows = {}, []
    for name in args.models.split(","):
        path = model_path(name, default_weights_dir())
        for threads in map(int, args.threads.split(",")):
            speed = time_model(path, threads)
            results.setdefault(name, {})[threads] = speed | {"bytes": path.stat().st_size}
            rows.append([name, threads, speed["prefill"], speed["decode"],
                         150 / speed["prefill"], 1024 / speed["prefill"]])  # fmt: skip
    title = "model speed (tokens/s; seconds for a 150-token verdict and a 1,024-token prompt)"
    columns = ["model", "threads", "prefill", "decode", "150 tok s", "1024 tok s"]
    print_table(title, columns, rows)
    write_results(args.out, {"models": results}, vars(args))


if __name__ == "__main__":
    main()
