"""Quantisation recipes for the ONNX encoder side by side: vector fidelity, speed, quality.

    python bench/studies/int8_recipes.py [--recipes a,b] [--sample 64] [--rounds 3] [--no-eval]
                                         [--eval a,b]

Every recipe quantises the float export (the "onnx" backend's model.onnx). Fidelity: the cosine
of its vectors to float's on a neutral sample that ships with Python (docstrings of the standard
library: 200-token passages, and docstrings' first lines as short texts), never the eval sets.
Sensitivity: each dense MatMul quantised alone, ranked by how far it moves the passage vectors;
"skip-k" keeps the k most sensitive in float. Speed: CPU-ms per 200-token text, one text per run
on one thread (the import's design), recipes interleaved in rounds. Quality, once per recipe:
demo recall@10 of distinct chunks (hybrid, what tests/test_demo_retrieval.py asserts) and DL19
nDCG@10 (dense and hybrid). Writes bench/results/int8_recipes.json (or --out).

The shipped recipe, smooth-attn-blocks (assistant/knowledge/quantize.py), was chosen before the
quality runs: the most faithful of the recipes no slower than dyn-pc (the earlier int8).
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"

# ruff: noqa: E402
import argparse
import ast
import hashlib
import statistics
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

from _common import default_eval_dir, import_demo, load_qa, log, print_table, write_results
from encoders import HYBRID, distinct_recall
from retrieval import bench_dl19

from assistant.home import open_home
from assistant.knowledge import quantize as q
from assistant.knowledge.db import open_db
from assistant.knowledge.embeddings import default_embedding_model, default_encoders_dir
from assistant.knowledge.encoder import OnnxEmbedder, ensure_exported, onnx_file, usable_cores
from assistant.knowledge.retrieval import Retriever
from assistant.knowledge.store import KnowledgeStore

RECIPES = (
    "float,dyn-pc,dyn-pc-rr,dyn-pt,dyn-pc-skip1,dyn-pc-skip3,nbits8-b32,nbits8-b128,dyn-attn,"
    "smooth-attn,smooth-attn-blocks"
)
MAX_LENGTH = 256


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipes", default=RECIPES)
    parser.add_argument("--sample", type=int, default=64, help="passages (and short texts)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-eval", action="store_true", help="fidelity and speed only")
    parser.add_argument("--eval", default="", help="evaluate only these recipes (default: all)")
    parser.add_argument("--out", default="int8_recipes")
    parser.add_argument(
        "--write-calibration", action="store_true", help=f"write {q.CALIBRATION.name} and stop"
    )
    parser.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    return parser.parse_args()


# --- the neutral sample -------------------------------------------------------------------


def docstrings() -> list[str]:
    """Docstrings of the standard library's top-level modules, in file order."""
    found = []
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef):
                doc = ast.get_docstring(node)
                if doc and len(doc.split()) >= 8:
                    found.append(" ".join(doc.split()))
    return found


def neutral_sample(tokenizer_file: Path, n: int) -> tuple[list[str], list[str]]:
    """`n` passages of 200 tokens (docstrings joined and cut) and `n` short texts (first
    sentences), spread over the whole standard library."""
    from tokenizers import Tokenizer

    docs = docstrings()
    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.no_truncation()
    joined = " ".join(docs)
    offsets = tokenizer.encode(joined, add_special_tokens=False).offsets
    size = 198  # [CLS] and [SEP] make 200
    cuts = list(range(0, len(offsets) - size, size))
    cuts = cuts[:: max(1, len(cuts) // n)][:n]
    passages = [joined[offsets[i][0] : offsets[i + size - 1][1]] for i in cuts]
    firsts = [d.split(". ")[0] for d in docs if 6 <= len(d.split(". ")[0].split()) <= 30]
    return passages, firsts[:: max(1, len(firsts) // n)][:n]


def write_calibration(texts: list[str]) -> None:
    header = (
        "# Calibration text of the int8 encoder (assistant/knowledge/quantize.py): docstrings of\n"
        f"# the Python {sys.version_info.major}.{sys.version_info.minor} standard library "
        "(PSF License), written by bench/studies/int8_recipes.py\n"
        "# --write-calibration; the bench measures fidelity on the other half of its sample.\n"
    )
    q.CALIBRATION.write_text(header + "\n".join(texts) + "\n", encoding="utf-8")
    log(f"wrote {len(texts)} texts to {q.CALIBRATION}")


# --- the recipes ----------------------------------------------------------------------------


def dynamic(
    fp32: Path,
    out: Path,
    per_channel: bool = True,
    reduce_range: bool = False,
    exclude: list[str] | None = None,
    only: list[str] | None = None,
) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        str(fp32),
        str(out),
        weight_type=QuantType.QInt8,
        per_channel=per_channel,
        reduce_range=reduce_range,
        op_types_to_quantize=["MatMul"],
        nodes_to_exclude=exclude or [],
        nodes_to_quantize=only or [],
        extra_options={"MatMulConstBOnly": True, "DefaultTensorType": onnx.TensorProto.FLOAT},
    )


def nbits8(fp32: Path, out: Path, block: int) -> None:
    """Every dense MatMul in 8-bit blocks of `block` inputs (MatMulNBits, int8 products)."""
    import onnx

    model = onnx.load(str(fp32))
    q.to_blocks(model, [n for n in model.graph.node if n.op_type == "MatMul"], block)
    onnx.save(model, str(out))


def smoothed(fp32: Path, out: Path, tokenizer_file: Path, blockwise: bool) -> None:
    """Smoothing and dynamic int8 with the attention; `blockwise`: the FFN output dense layers
    in 8-bit blocks (the shipped recipe, quantize.quantize), else smoothed too."""
    import onnx

    if blockwise:
        q.quantize(fp32, out, tokenizer_file, MAX_LENGTH)
        return
    model = onnx.load(str(fp32))
    smooth, ffn_out = q.targets(model)
    texts = q.calibration_texts()
    names = [n.input[0] for n in smooth + ffn_out]
    q.smooth(
        model,
        smooth + ffn_out,
        q.activation_maxima(fp32, names, texts, tokenizer_file, MAX_LENGTH),
        q.ALPHA,
    )
    staged = out.with_suffix(".staged.onnx")
    onnx.save(model, str(staged))
    q.dynamic_int8(staged, out)


def matmuls(fp32: Path) -> list[str]:
    import onnx

    model = onnx.load(str(fp32), load_external_data=False)
    return [n.name for n in model.graph.node if n.op_type == "MatMul"]


def build(recipe: str, fp32: Path, folder: Path, tokenizer_file: Path, ranked: list[str]) -> Path:
    out = folder / f"{recipe}.onnx"
    if recipe == "float":
        return fp32
    if recipe.startswith("nbits8-b"):
        nbits8(fp32, out, int(recipe.removeprefix("nbits8-b")))
    elif recipe.startswith("dyn-pc-skip"):
        dynamic(fp32, out, exclude=ranked[: int(recipe.removeprefix("dyn-pc-skip"))])
    elif recipe == "dyn-attn":  # the attention's projections too, unsmoothed
        q.dynamic_int8(fp32, out)
    elif recipe in ("smooth-attn", "smooth-attn-blocks"):
        smoothed(fp32, out, tokenizer_file, blockwise=recipe.endswith("blocks"))
    else:
        dynamic(fp32, out, per_channel=recipe != "dyn-pt", reduce_range=recipe.endswith("-rr"))
    return out


def encoder(path: Path, tokenizer_file: Path, tag: str) -> OnnxEmbedder:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    return OnnxEmbedder(path, tokenizer_file, f"all-MiniLM-L6-v2+{tag}-{digest}", workers=1)


# --- the measures ---------------------------------------------------------------------------


def fidelity(vectors: np.ndarray, reference: np.ndarray) -> dict[str, float]:
    cosines = (vectors * reference).sum(1)
    return {
        "mean": float(cosines.mean()),
        "min": float(cosines.min()),
        "mean_distance": float((1 - cosines).mean()),
    }


def sensitivity(
    fp32: Path, folder: Path, tokenizer_file: Path, texts: list[str], reference: np.ndarray
) -> list[dict[str, Any]]:
    """Each MatMul quantised alone (dynamic, per channel): how far the vectors move."""
    ranks = []
    for name in matmuls(fp32):
        out = folder / "single.onnx"
        dynamic(fp32, out, only=[name])
        vectors = encoder(out, tokenizer_file, "single").embed_batch(texts)
        ranks.append({"node": name, **fidelity(vectors, reference)})
        log(f"sensitivity {name}: {ranks[-1]['mean_distance']:.2e}")
    return sorted(ranks, key=lambda r: -r["mean_distance"])


def speed(encoders: dict[str, OnnxEmbedder], texts: list[str], rounds: int) -> dict[str, Any]:
    cpu: dict[str, list[float]] = {r: [] for r in encoders}
    for e in encoders.values():
        e.embed_batch(texts[:4])
    for _ in range(rounds):
        for recipe, e in encoders.items():
            cpu0 = time.process_time()
            e.embed_batch(texts)
            cpu[recipe].append(time.process_time() - cpu0)
    ms = {r: 1000 * statistics.median(c) / len(texts) for r, c in cpu.items()}
    return {
        r: {
            "cpu_ms_per_chunk": ms[r],
            "cpu_bound_chunks_per_second_2_cores": 2000 / ms[r],
            "cpu_seconds": cpu[r],
        }
        for r in encoders
    }


def quality(embedder: OnnxEmbedder, tmp: Path, eval_dir: Path) -> dict[str, Any]:
    embedder.workers = usable_cores()  # the import's design: one run per core
    store = KnowledgeStore(open_db(open_home(tmp / embedder.name).knowledge_db))
    import_demo(store, embedder)
    retriever = Retriever(store, embedder, None)
    dl19 = bench_dl19(embedder, eval_dir, False)
    return {
        "demo_recall@10_distinct": distinct_recall(retriever, load_qa()),
        "dl19_ndcg@10": {m: dl19["modes"][m]["ndcg@10"] for m in ("dense", HYBRID)},
    }


def main() -> None:
    args = parse_args()
    recipes = args.recipes.split(",")
    model_dir = default_embedding_model()
    tokenizer_file = model_dir / "tokenizer.json"
    fp32 = ensure_exported(model_dir, onnx_file(model_dir, default_encoders_dir(), "onnx"))
    passages, shorts = neutral_sample(tokenizer_file, 2 * args.sample)
    if args.write_calibration:  # one half calibrates, the other measures
        write_calibration(passages[0::2] + shorts[0::2])
        return
    passages, shorts = passages[1::2], shorts[1::2]
    texts = passages + shorts
    results: dict[str, Any] = {"sample": {"passages": len(passages), "short": len(shorts)}}
    with tempfile.TemporaryDirectory(prefix="int8-recipes-") as tmp:
        folder = Path(tmp)
        reference = encoder(fp32, tokenizer_file, "float").embed_batch(texts)
        ranked = sensitivity(fp32, folder, tokenizer_file, passages[:48], reference[:48])
        results["sensitivity"] = ranked
        names = [r["node"] for r in ranked]
        encoders = {
            r: encoder(build(r, fp32, folder, tokenizer_file, names), tokenizer_file, r)
            for r in recipes
        }
        runs: dict[str, dict[str, Any]] = {}
        for recipe, e in encoders.items():
            vectors = e.embed_batch(texts)
            runs[recipe] = {
                "embedder": e.name,
                "file_mib": e.path.stat().st_size / 2**20,
                "cosine_to_float": fidelity(vectors, reference),
                "cosine_passages": fidelity(vectors[: len(passages)], reference[: len(passages)]),
                "cosine_short": fidelity(vectors[len(passages) :], reference[len(passages) :]),
            }
            log(f"{recipe}: {runs[recipe]['cosine_to_float']}")
        for recipe, s in speed(encoders, passages, args.rounds).items():
            runs[recipe]["speed_200_tokens"] = s
        evaluate = args.eval.split(",") if args.eval else recipes
        for recipe in [] if args.no_eval else evaluate:
            log(f"{recipe}: demo and DL19")
            runs[recipe]["quality"] = quality(encoders[recipe], folder, args.eval_dir)
    results["runs"] = runs
    report(runs)
    print(f"wrote {write_results(args.out, results, vars(args))}")


def report(runs: dict[str, dict[str, Any]]) -> None:
    base = runs.get("float", next(iter(runs.values())))["speed_200_tokens"]["cpu_ms_per_chunk"]
    columns = ["recipe", "cos mean", "cos min", "CPU-ms/200tok", "x float", "chunks/s 2 cores"]
    columns += ["demo distinct hybrid", "DL19 dense", "DL19 hybrid"]
    rows = []
    for recipe, r in runs.items():
        q = r.get("quality", {})
        s = r["speed_200_tokens"]
        rows.append(
            (
                recipe,
                r["cosine_to_float"]["mean"],
                r["cosine_to_float"]["min"],
                s["cpu_ms_per_chunk"],
                base / s["cpu_ms_per_chunk"],
                s["cpu_bound_chunks_per_second_2_cores"],
                q.get("demo_recall@10_distinct", {}).get("hybrid", np.nan),
                q.get("dl19_ndcg@10", {}).get("dense", np.nan),
                q.get("dl19_ndcg@10", {}).get(HYBRID, np.nan),
            )
        )
    print_table("Quantisation recipes", columns, rows, "speed: one thread, one text per run")


if __name__ == "__main__":
    main()
