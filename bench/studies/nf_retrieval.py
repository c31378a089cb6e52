"""Can retrieval tell a question the mail cannot answer? Model-free signals against the reader's.

    python bench/studies/nf_retrieval.py [--work /tmp/reader_fit] [--rows DIR] [--out nf_retrieval]

For every question of the dev mailbox's earlier and new sets and the second mailbox's (the ones
with unanswerable questions), as an answer finds them (filters, fused retrieval, the quote; no
model): the idf-weighted share of the question's content words found in the top-3 chunks, the
rarest word missing from them, how many are missing, the first chunk's fused score and the quote
line's score. Each is scored by AUC (answerable vs unanswerable: 0.5 is chance) beside the
reader's best margin (quote or a next candidate) from bench/reader_fit.py's rows (--rows), the
signal "not found" reads today (issue 46). Imported homes are copied from --work (home-real,
home-fossum: bench/reader_fit.py makes them). Writes bench/results/OUT.json.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

import numpy as np  # noqa: E402
from _common import QA_DIR, _jsonl, log, print_table, write_results  # noqa: E402
from reader_fit import auc, kept_rows, margins  # noqa: E402

from assistant.knowledge.bm25 import tokenize  # noqa: E402
from assistant.services import open_services  # noqa: E402
from cache.words import STOPWORDS  # noqa: E402

SETS = {"real": ("real", "skilling_qa"), "new": ("real", "skilling_new"),
        "fossum": ("fossum", "fossum_qa")}  # fmt: skip
# words of asking, not of what is asked
GENERIC = frozenset(
    "say said tell told ask asked send sent wrote write mail email note about want wanted get "
    "got go going make made".split()
)
FEATURES = {  # name: sign (higher means answerable)
    "covered_idf": 1, "rarest_missing_idf": -1, "missing_words": -1, "top_fused": 1,
    "quote_line": 1,
}  # fmt: skip


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/reader_fit"))
    parser.add_argument("--rows", type=Path, default=Path("/tmp/reader_fit"))
    parser.add_argument("--out", default="nf_retrieval")
    return parser.parse_args()


def features(ctx, question: str) -> dict:
    index = ctx.retriever.bm25_index()
    df, n = np.diff(index.weights.indptr), index.weights.shape[0]

    def idf(term: str) -> float:
        j = index.vocab.get(term)
        return math.log((n + 1) / ((df[j] if j is not None else 0) + 0.5))

    vector = ctx.embedder.embed_batch([question])[0]
    hits, found = ctx.answerer().quote(question, vector)
    words = set(tokenize("\n".join(h.record.text for h in hits[:3])))
    starts = {w[:5] for w in words}  # a light stem: 'skiing' has 'ski'
    terms = [t for t in dict.fromkeys(tokenize(question)) if t not in STOPWORDS | GENERIC]
    weight = {t: idf(t) for t in terms}
    missing = [t for t in terms if t not in words and t[:5] not in starts]
    return {
        "covered_idf": 1 - sum(weight[t] for t in missing) / (sum(weight.values()) or 1),
        "rarest_missing_idf": max((weight[t] for t in missing), default=0.0),
        "missing_words": len(missing),
        "top_fused": hits[0].score if hits else 0.0,
        "quote_line": float(found.ranked[0][1]) if found.ranked else 0.0,
        "missing": missing,
    }


def main() -> None:
    args = parse_args()
    results: dict = {}
    table = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (kind, qfile) in SETS.items():
            home = Path(tmp) / f"home-{kind}"
            if not home.exists():
                shutil.copytree(args.work / f"home-{kind}", home)
            ctx = open_services(home)
            kept = kept_rows(args.rows / f"{name}.jsonl")
            best = {i: max(margins(r)) for i, r in kept.items()}
            rows = []
            for q in _jsonl(QA_DIR / f"{qfile}.jsonl"):
                answerable = q.get("answerable", True) is not False
                found = features(ctx, q["question"])
                rows.append({"id": q["id"], "answerable": answerable,
                             "reader_best": best.get(q["id"]), **found})  # fmt: skip
            log(f"{name}: {len(rows)} questions")
            scores = {}
            for feature, sign in {**FEATURES, "reader_best": 1}.items():
                kept = [r for r in rows if r[feature] is not None]
                pos = [sign * r[feature] for r in kept if r["answerable"]]
                neg = [sign * r[feature] for r in kept if not r["answerable"]]
                scores[feature] = auc(pos, neg)
            results[name] = {"questions": len(rows),
                             "unanswerable": sum(not r["answerable"] for r in rows),
                             "auc": scores, "rows": rows}  # fmt: skip
            table.append([name, len(rows), results[name]["unanswerable"],
                          *(f"{scores[f]:.3f}" if scores[f] is not None else "-"
                            for f in [*FEATURES, "reader_best"])])  # fmt: skip
    print_table("answerable vs unanswerable, AUC (0.5 is chance)",
                ["set", "questions", "unanswerable", *FEATURES, "reader_best"], table)  # fmt: skip
    write_results(args.out, {"sets": results}, vars(args))


if __name__ == "__main__":
    main()
