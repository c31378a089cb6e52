"""A new user's first import: the encoder's one-off export, in a child process or in the importer.

    python bench/studies/export.py [--out export]

A new home gets the int8 encoder ([embedding] backend = "auto"), exported and quantised from the
installed model on first use unless `make setup` made it. Each design runs in a fresh process
with an empty encoders folder, makes the encoder, then imports the demo mailbox and notes into a
fresh home: "child" as shipped (assistant/knowledge/encoder.py: ensure_exported runs the export
in a child process), "in-process" (export_here in the importing process, as before). Reported:
the export's seconds, the importing process's resident memory after the export and at its peak,
and (child) the export child's peak. Writes bench/results/export.json (or --out).
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"

# ruff: noqa: E402
import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: _common and the rest

from _common import REPO, import_demo, log, print_table, rss_mib, write_results

DESIGNS = ("child", "in-process")


def run(design: str) -> dict[str, Any]:
    """One design, in this (fresh) process."""
    from assistant.config_sections import EmbeddingSettings
    from assistant.home import open_home
    from assistant.knowledge.db import open_db
    from assistant.knowledge.embeddings import make_embedder
    from assistant.knowledge.encoder import export_here, onnx_file
    from assistant.knowledge.store import KnowledgeStore

    with tempfile.TemporaryDirectory(prefix="bench-export-") as tmp:
        settings = EmbeddingSettings(encoders_dir=str(Path(tmp) / "encoders"))
        t0 = time.perf_counter()
        if design == "in-process":
            from assistant.knowledge.embeddings import default_embedding_model

            model = default_embedding_model()
            export_here(model, onnx_file(model, Path(settings.encoders_dir), "onnx-int8"))
        embedder = make_embedder(settings)
        export_seconds = time.perf_counter() - t0
        after_export = rss_mib()
        store = KnowledgeStore(open_db(open_home(Path(tmp) / "home").knowledge_db))
        report = import_demo(store, embedder)
        children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        return {
            "design": design,
            "embedder": embedder.name,
            "export_seconds": export_seconds,
            "rss_after_export_mib": after_export,
            "rss_after_import_mib": rss_mib(),
            "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "export_child_peak_mib": children if design == "child" else None,
            "chunks": report.embedded,
            "loadavg_1min": os.getloadavg()[0],
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="export", help="results file name (no .json)")
    parser.add_argument("--child", choices=DESIGNS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run(args.child)))
        return
    runs = {}
    for design in DESIGNS:
        log(f"{design}: a fresh process exports the encoder and imports the demo")
        done = subprocess.run(
            [sys.executable, __file__, "--child", design],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        )
        runs[design] = json.loads(done.stdout.strip().splitlines()[-1])
    keys = [
        ("export seconds", "export_seconds"),
        ("importer RSS after the export, MiB", "rss_after_export_mib"),
        ("importer RSS after the import, MiB", "rss_after_import_mib"),
        ("importer peak RSS, MiB", "peak_mib"),
        ("export child's peak RSS, MiB", "export_child_peak_mib"),
        ("chunks embedded", "chunks"),
    ]
    rows = [(label, *(runs[d][key] for d in DESIGNS)) for label, key in keys]
    note = "each design in a fresh process with an empty encoders folder, one after the other"
    print_table("First import: the encoder's export", ["", *DESIGNS], rows, note, left=1)
    print(f"wrote {write_results(args.out, runs, vars(args))}")


if __name__ == "__main__":
    main()
