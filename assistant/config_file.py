"""The layout of <home>/config.toml: the keys a user changes first at the top, the rest under
[expert].

A user key sits in its section at the top level (`[llm] model_path`); an expert key sits in the
same section under the expert table (`[expert.retrieval] top_k`). Each is read into the one
`Settings` of config.py either way, so code never asks where a key was written. A key nobody
knows is an error naming the key and the file, with the nearest known key; an expert key written
at the top level (a config file from before the split) is read, with a warning saying where it
belongs now, so nothing a user stored is lost.
"""

from __future__ import annotations

import difflib
import tomllib
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

EXPERT = "expert"
SWITCHES = ("rerank",)  # top-level keys that are values, not [sections]

# The keys a user changes first: which model, how much disk the caches take, when the night's
# precompute starts, how many results a search shows. README.md documents each of them.
USER_KEYS: dict[str, tuple[str, ...]] = {
    "llm": ("model_path", "n_threads"),
    "models": ("reader", "writer"),
    "embedding": ("model_path",),
    "retrieval": ("top_k",),
    "cache": ("kv_budget_mb", "qa_budget_mb"),
    "precompute": ("idle_minutes", "ac_only", "settle_seconds"),
    "reranker": ("model",),
    "mail": ("today", "filters"),
}

# Keys that set what the package no longer has: read and ignored, with a warning saying why.
RETIRED_KEYS = {
    ("reranker", "threshold"): "the pruned query-likelihood reranker is retired to bench/ql",
    ("reranker", "resident_layers"): "the pruned query-likelihood reranker is retired to bench/ql",
}


class ConfigError(ValueError):
    """A config file or env var that cannot be used; the message says which and why."""


class ConfigWarning(UserWarning):
    """A config file that still reads, written in an older layout; the message says the fix."""


def read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}); fix or delete the file") from exc


def is_user_key(section: str, key: str) -> bool:
    return key in USER_KEYS.get(section, ())


def place(section: str, key: str) -> str:
    """Where a key is written in config.toml, as a user reads it."""
    table = section if is_user_key(section, key) else f"{EXPERT}.{section}"
    return f"[{table}] {key}"


def flatten(
    values: Mapping[str, Any], known: Mapping[str, Iterable[str]], source: str
) -> dict[str, dict[str, Any]]:
    """The file's values as {section: {key: value}}, whichever table each was written in.

    `known` maps every section to its keys. Raises ConfigError on a key or section nobody knows;
    warns (ConfigWarning) for a key written in the other table than its own.
    """
    out: dict[str, dict[str, Any]] = {}
    for name, value in values.items():
        if name in SWITCHES:
            out.setdefault("", {})[name] = value
        elif name == EXPERT:
            _take_expert(_table(value, name, source), known, source, out)
        else:
            _take_section(name, value, known, source, out, expert=False)
    return out


def _take_expert(
    values: Mapping[str, Any], known: Mapping[str, Iterable[str]], source: str, out: dict
) -> None:
    for name, value in values.items():
        _take_section(name, value, known, source, out, expert=True)


def _take_section(
    name: str,
    value: Any,
    known: Mapping[str, Iterable[str]],
    source: str,
    out: dict[str, dict[str, Any]],
    expert: bool,
) -> None:
    table = f"{EXPERT}.{name}" if expert else name
    value = _table(value, table, source)
    if name not in known:
        raise ConfigError(f"{source}: unknown section [{table}]{_nearest_section(name, known)}")
    keys = set(known[name])
    for key, raw in value.items():
        if (name, key) in RETIRED_KEYS:
            why = RETIRED_KEYS[name, key]
            warnings.warn(f"{source}: {name}.{key} is ignored: {why}", ConfigWarning, stacklevel=2)
            continue
        if key not in keys and key in SWITCHES:  # written below a [section] header: TOML's
            raise ConfigError(  # rule puts it in that section
                f"{source}: {key} is read as {name}.{key}: a top-level key such as {key} goes "
                f"above the first [section] of the file"
            )
        if key not in keys:
            raise ConfigError(f"{source}: unknown key {name}.{key}{_nearest_key(name, key, known)}")
        if is_user_key(name, key) == expert:
            warnings.warn(
                f"{source}: {name}.{key} belongs under {place(name, key)} now; read from "
                f"[{table}] this time, move it there to silence this",
                ConfigWarning,
                stacklevel=2,
            )
        out.setdefault(name, {})[key] = raw


def _table(value: Any, table: str, source: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{source}: [{table}] must be a table of keys, got {value!r}")
    return value


def _nearest_section(name: str, known: Mapping[str, Iterable[str]]) -> str:
    names = [*known, EXPERT, *SWITCHES]
    match = difflib.get_close_matches(name, names, n=1)
    return f" (did you mean [{match[0]}]?)" if match else ""


def _nearest_key(section: str, key: str, known: Mapping[str, Iterable[str]]) -> str:
    dotted = {f"{s}.{k}": (s, k) for s, keys in known.items() for k in keys}
    match = difflib.get_close_matches(f"{section}.{key}", list(dotted), n=1, cutoff=0.7)
    return f" (did you mean {place(*dotted[match[0]])}?)" if match else ""
