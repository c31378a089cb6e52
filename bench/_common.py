"""Shared helpers for the benchmarks: timing, tables, results JSON, metrics, loaders, stores."""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import platform
import resource
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

# bench/cache.py is named like the `cache` package: with this folder first on sys.path (as when a
# bench runs as a script), `import cache` would find the script. Move the folder to the end, and
# put this checkout first: a bench measures the code beside it, whatever is installed.
_BENCH = Path(__file__).resolve().parent
_others = [e for e in sys.path if Path(e or ".").resolve() not in (_BENCH, _BENCH.parent)]
sys.path[:] = [str(_BENCH.parent), *_others, str(_BENCH)]

import numpy as np  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from assistant.config_sections import ChunkingSettings  # noqa: E402
from assistant.importing.importer import Importer, ImportReport  # noqa: E402
from assistant.knowledge.store import KnowledgeStore  # noqa: E402
from cache.protocols import Embedder  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO / "bench" / "results"
DEMO_MBOX = REPO / "data" / "mail" / "demo.mbox"
DEMO_NOTES = REPO / "data" / "notes"
QA_DIR = REPO / "data" / "qa"
QA_FILES = (QA_DIR / "mail_qa.jsonl", QA_DIR / "notes_qa.jsonl")
CACHE_DIR = Path("/tmp/bench-cache")  # outside the repo: nothing to git-ignore
EMBED_DIM = 384
PACKAGES = ("numpy", "scipy", "rank-bm25", "sentence-transformers", "torch", "sqlite-utils")

T = TypeVar("T")


def default_eval_dir() -> Path:
    return REPO.parent / "shared" / "eval"


# -- timing and memory ------------------------------------------------------------------------


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    """(fn(), wall seconds)."""
    t0 = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t0


def percentile(values: Sequence[float], p: float) -> float:
    if not len(values):
        return float("nan")
    return float(np.percentile(np.asarray(values, dtype=np.float64), p))


def rss_mib() -> float:
    """Current resident set size (VmRSS), MiB; the peak from getrusage where /proc is missing."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def log(message: str) -> None:
    """Progress on stderr, so stdout holds only the tables."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# -- tables -----------------------------------------------------------------------------------


@cache
def _console() -> Console:
    return Console(width=None if sys.stdout.isatty() else 130, highlight=False)


def fmt(value: object) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        if abs(value) >= 100:
            return f"{value:,.0f}"
        return f"{value:.2f}" if abs(value) >= 1 else f"{value:.3f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def print_table(
    title: str,
    columns: Sequence[str],
    rows: Iterable[Sequence[object]],
    note: str = "",
    left: int = 1,
    wrap_first: bool = False,
) -> None:
    """A rich table; the first `left` columns are text (left-aligned), the rest numbers; the
    note is printed below it."""
    table = Table(title=title, title_justify="left")
    for i, name in enumerate(columns):
        table.add_column(
            name,
            justify="left" if i < left else "right",
            overflow="fold",
            no_wrap=i == 0 and not wrap_first,
        )
    for row in rows:
        table.add_row(*(fmt(v) for v in row))
    _console().print(table)
    if note:
        _console().print(note, style="dim")
    _console().print()


# -- results JSON -----------------------------------------------------------------------------


def write_results(
    name: str, data: dict[str, Any], args: dict[str, Any], path: Path | None = None
) -> Path:
    """bench/results/NAME.json (or `path`): the data with the run's commit, machine and args."""
    payload = {
        "bench": name,
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": git_commit(),
        "machine": machine_info(),
        "args": args,
        **data,
    }
    path = path or RESULTS_DIR / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_clean(payload), indent=2, ensure_ascii=False) + "\n")
    return path


def _clean(value: Any) -> Any:
    """JSON-safe: NaN → null, numpy scalars → Python, paths → str, floats rounded."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else round(value, 6)
    if isinstance(value, Path):
        return str(value)
    return value


def git_commit(repo: Path = REPO) -> str | None:
    """HEAD's commit, read from the .git folder (no git process)."""
    git = repo / ".git"
    try:
        if git.is_file():
            git = (repo / git.read_text().split("gitdir:", 1)[1].strip()).resolve()
        common = (
            git / (git / "commondir").read_text().strip() if (git / "commondir").exists() else git
        )
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head
        ref = head[5:]
        if (common / ref).exists():
            return (common / ref).read_text().strip()
        for line in (common / "packed-refs").read_text().splitlines():
            if line.endswith(" " + ref):
                return line.split()[0]
    except (OSError, IndexError):
        return None
    return None


def machine_info() -> dict[str, Any]:
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "loadavg": list(os.getloadavg()),
        "sqlite": sqlite3.sqlite_version,
        "packages": {name: _version(name) for name in PACKAGES},
    }


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


# -- metrics ----------------------------------------------------------------------------------


def ndcg_at_k(ranked: Sequence[str], grades: dict[str, int], k: int = 10) -> float:
    """Graded nDCG: DCG = Σ (2^rel − 1) / log2(i + 1), i from 1; ideal DCG from the qrels."""
    dcg = sum((2 ** grades.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(grades.values(), reverse=True)[:k]
    idcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at_k(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    if not relevant:
        return float("nan")
    return len(set(ranked[:k]) & relevant) / len(relevant)


def mean(values: Iterable[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return sum(kept) / len(kept) if kept else float("nan")


# -- data -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class QA:
    question: str
    source: str
    kind: str
    must_contain: tuple[str, ...] = ()


def load_qa(paths: Sequence[Path] = QA_FILES) -> list[QA]:
    rows = [row for path in paths for row in _jsonl(path)]
    return [
        QA(r["question"], r["source"], r["kind"], tuple(r.get("must_contain", ()))) for r in rows
    ]


@dataclass(frozen=True)
class DL19:
    corpus_file: Path
    passages: list[tuple[str, str]]  # (passage id, title + text)
    queries: list[tuple[str, str]]  # (query id, text), file order
    qrels: dict[str, dict[str, int]]  # query id → passage id → grade


def load_dl19(eval_dir: Path) -> DL19:
    root = eval_dir / "dl19"
    passages = [
        (r["_id"], "\n".join(p for p in (r.get("title", "").strip(), r["text"].strip()) if p))
        for r in _jsonl(root / "corpus.jsonl")
    ]
    queries = [(r["_id"], r["text"]) for r in _jsonl(root / "queries.jsonl")]
    return DL19(root / "corpus.jsonl", passages, queries, _qrels(root / "qrels" / "test.tsv"))


def _jsonl(path: Path) -> list[dict[str, Any]]:
    # split on "\n" only: splitlines() would also break at U+2028/U+0085 inside JSON strings
    lines = path.read_text(encoding="utf-8").split("\n")
    return [json.loads(line) for line in lines if line.strip()]


def _qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text(encoding="utf-8").split("\n"):
        fields = line.rstrip("\r").split("\t")
        if len(fields) < 3 or not fields[-1].strip().lstrip("-").isdigit():
            continue  # a header line ("query-id corpus-id score") or a blank one
        qid, pid, grade = fields[0], fields[-2], int(fields[-1])
        qrels.setdefault(qid, {})[pid] = grade
    return qrels


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


# -- stores and embedders ---------------------------------------------------------------------


def require_demo(qa: bool = True) -> None:
    needed = (DEMO_MBOX, DEMO_NOTES, *(QA_FILES if qa else ()))
    missing = [p for p in needed if not p.exists()]
    if missing:
        raise SystemExit(f"demo corpus incomplete, missing: {', '.join(map(str, missing))}")


def demo_context(tmp: Path, reuse: Path | None):
    """A Services on a demo home under `tmp`: a copy of `reuse` (its caches and run markers left
    out, so every run starts cold), else the demo corpus imported afresh."""
    import shutil

    from assistant.services import open_services

    home = tmp / "home"
    if reuse:
        shutil.copytree(reuse, home, ignore=shutil.ignore_patterns("cache", "run"))
    ctx = open_services(home)
    if not reuse:
        import_demo(ctx.store, ctx.embedder)
    return ctx


def import_demo(store: KnowledgeStore, embedder: Embedder) -> ImportReport:
    importer = Importer(store, embedder, ChunkingSettings(), embed_batch=64)
    return importer.run([DEMO_MBOX, DEMO_NOTES])


def cli_import(home: Path, name: str, work: Path, eval_dir: Path) -> Path:
    """`home` imported by the app's own CLI (a subprocess, in this checkout) from the set `name`:
    "real" is Jeff Skilling's mailbox (<eval_dir>/mail/skilling-j.mbox.gz, unpacked under
    `work`), any other the demo mailbox and notes."""
    sources = [DEMO_MBOX, DEMO_NOTES]
    if name == "real":
        mbox = work / "skilling-j.mbox"
        with gzip.open(eval_dir / "mail" / "skilling-j.mbox.gz") as src, mbox.open("wb") as dst:
            shutil.copyfileobj(src, dst)
        sources = [mbox]
    log(f"importing {', '.join(map(str, sources))}")
    cmd = [sys.executable, "-m", "assistant.cli", "--home", str(home), "import", *map(str, sources)]
    subprocess.run(cmd, check=True, capture_output=True, cwd=REPO)
    return home


def plot_rss(timelines: dict[str, list], xlabel: str, title: str, path: Path) -> None:
    """Resident memory over time, one line per run: `timelines` maps a name to (t, MiB) points."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for name, points in timelines.items():
        t, m = zip(*points, strict=True)
        ax.plot(t, m, label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("RSS (MiB)")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
