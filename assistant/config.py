"""Typed settings: defaults, overridden by <home>/config.toml, overridden by ASSISTANT_* env vars.

The file keeps the keys a user changes first at the top level and the rest under [expert]
(config_file.py says which are which); both land in the same sections here. Env vars are named
ASSISTANT_<SECTION>_<KEY> for either kind, e.g. ASSISTANT_RETRIEVAL_TOP_K=5. The sections and
their defaults (the benches' choices) are config_sections.py's. Settings are built once by the
caller and passed in; nothing here is global.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from assistant.config_file import SWITCHES, ConfigError, ConfigWarning, flatten, read_toml
from assistant.config_sections import (
    AnswerSettings,
    CacheSettings,
    ChunkingSettings,
    EmbeddingSettings,
    LLMSettings,
    MailSettings,
    ModelsSettings,
    PrecomputeSettings,
    RerankerSettings,
    RetrievalSettings,
)
from assistant.kv.reuse_policy import REUSE_MODES, check_repair
from cache.policy import PLANS

__all__ = ["ConfigError", "ConfigWarning", "Settings", "load_settings"]


RERANK_MODES = ("off", "full", "cross", "cross-pruned", "auto")
# pruned query likelihood is no longer a mode to choose: its ranking forms only in the last
# layers, so pruning saves nothing (bench/results/rerank_quality.json, "layer_agreement";
# rerank_speed.json); the benches that show it build it from bench/ql
RETIRED = {
    "pruned": "pruned query likelihood saves nothing (its ranking forms only in the last layers); "
    'use rerank = "full", or "cross-pruned" with a cross-encoder folder as [reranker] model'
}


@dataclass
class Settings:
    embedding: EmbeddingSettings = field(default_factory=EmbeddingSettings)
    chunking: ChunkingSettings = field(default_factory=ChunkingSettings)
    retrieval: RetrievalSettings = field(default_factory=RetrievalSettings)
    llm: LLMSettings = field(default_factory=LLMSettings)
    models: ModelsSettings = field(default_factory=ModelsSettings)
    cache: CacheSettings = field(default_factory=CacheSettings)
    answer: AnswerSettings = field(default_factory=AnswerSettings)
    precompute: PrecomputeSettings = field(default_factory=PrecomputeSettings)
    reranker: RerankerSettings = field(default_factory=RerankerSettings)
    mail: MailSettings = field(default_factory=MailSettings)
    # the switch: one of RERANK_MODES (config key `rerank`, ASSISTANT_RERANK). "auto": fused until
    # the nightly self-check finds a reranker that wins on this mail and is cheap enough
    rerank: str = "auto"


def load_settings(
    config_file: Path | None = None, env: Mapping[str, str] | None = None
) -> Settings:
    settings = Settings()
    if config_file is not None and config_file.exists():
        _apply(settings, _file_values(settings, config_file), source=str(config_file))
    env = os.environ if env is None else env
    _apply(settings, _env_overrides(settings, env), source="env")
    settings.rerank = env.get("ASSISTANT_RERANK", settings.rerank)
    try:
        _check_rerank(settings.rerank)
        _check_values(settings)
    except ConfigError as exc:
        where = f"{config_file} or " if config_file is not None and config_file.exists() else ""
        raise ConfigError(f"{exc} (set in {where}the environment)") from None
    return settings


def _check_rerank(rerank: str) -> None:
    if rerank in RETIRED:
        raise ConfigError(f"rerank = {rerank!r} was removed: {RETIRED[rerank]}")
    if rerank not in RERANK_MODES:
        raise ConfigError(f"rerank: expected one of {', '.join(RERANK_MODES)}, got {rerank!r}")


def _check_values(settings: Settings) -> None:
    """The settings that take one of a few values, once file and environment are merged."""
    _check_finite(settings)
    _check_answer(settings.answer)
    _check_cache(settings.cache)
    _check_mail(settings.mail)
    if settings.llm.weights not in ("auto", "as-is"):
        raise ConfigError(f"llm.weights: expected auto or as-is, got {settings.llm.weights!r}")
    for section in ("llm", "reranker"):
        if getattr(settings, section).n_threads < 0:
            raise ConfigError(
                f"{section}.n_threads: expected 0 (chosen for this machine) or a number of "
                f"threads, got {getattr(settings, section).n_threads}"
            )
    if settings.llm.kv_type not in ("f16", "q8_0", "q4_0"):
        raise ConfigError(f"llm.kv_type: expected f16, q8_0 or q4_0, got {settings.llm.kv_type!r}")
    if settings.precompute.plan not in PLANS:
        raise ConfigError(
            f"precompute.plan: expected one of {', '.join(PLANS)}, got {settings.precompute.plan!r}"
        )
    if settings.precompute.reader_nodes not in ("lines", "headers", "none"):
        raise ConfigError(
            "precompute.reader_nodes: expected lines, headers or none, "
            f"got {settings.precompute.reader_nodes!r}"
        )
    if settings.embedding.backend not in ("auto", "torch", "onnx", "onnx-int8"):
        raise ConfigError(
            "embedding.backend: expected 'auto', 'torch', 'onnx' or 'onnx-int8', "
            f"got {settings.embedding.backend!r}"
        )
    if settings.reranker.cross_packed_rows < 0:
        raise ConfigError(
            "reranker.cross_packed_rows: expected 0 (padded batches) or a number of token rows, "
            f"got {settings.reranker.cross_packed_rows}"
        )
    if settings.retrieval.fusion not in ("zscore", "rrf"):
        raise ConfigError(
            f"retrieval.fusion: expected 'zscore' or 'rrf', got {settings.retrieval.fusion!r}"
        )


def _check_mail(mail: MailSettings) -> None:
    if mail.filters not in ("words", "terms", "off"):
        raise ConfigError(f"mail.filters: expected words, terms or off, got {mail.filters!r}")
    if mail.today:
        try:
            date.fromisoformat(mail.today)
        except ValueError:
            expected = f"mail.today: expected a date YYYY-MM-DD, got {mail.today!r}"
            raise ConfigError(expected) from None


def _check_answer(answer: AnswerSettings) -> None:
    choices = {
        "chunk_order": ("best-first", "best-last"),
        "evidence_place": ("context", "question", "none"),
        "prompt_chunks": ("top", "shown"),
        "repeat_guard": ("ban", "stop", "off"),
        "decoding": ("greedy", "cad"),
        "duplicates": ("merge", "keep"),
    }
    for key, allowed in choices.items():
        if getattr(answer, key) not in allowed:
            raise ConfigError(
                f"answer.{key}: expected one of {', '.join(allowed)}, got {getattr(answer, key)!r}"
            )


def _check_cache(cache: CacheSettings) -> None:
    if cache.reuse not in REUSE_MODES:
        raise ConfigError(
            f"cache.reuse: expected one of {', '.join(REUSE_MODES)}, got {cache.reuse!r}"
        )
    try:
        check_repair(cache.repair)
    except ValueError as exc:
        raise ConfigError(f"cache.repair: {exc}") from exc
    # 0 is "sized to the disk" for the KV budget only: a QA budget of 0 would drop every
    # remembered answer as the next one is stored
    if cache.qa_budget_mb <= 0:
        raise ConfigError(
            f"cache.qa_budget_mb: expected a size in MB above 0, got {cache.qa_budget_mb}"
        )
    if cache.kv_budget_mb < 0:
        raise ConfigError(
            f"cache.kv_budget_mb: expected 0 (10% of the free disk) or a size in MB, "
            f"got {cache.kv_budget_mb}"
        )


def _check_finite(settings: Settings) -> None:
    """A number the TOML file wrote as inf or nan is no size, no threshold, no duration."""
    for section in dataclasses.fields(settings):
        values = getattr(settings, section.name)
        if not dataclasses.is_dataclass(values):
            continue
        for key in dataclasses.fields(values):
            value = getattr(values, key.name)
            if isinstance(value, float) and not math.isfinite(value):
                raise ConfigError(f"{section.name}.{key.name}: expected a number, got {value}")


def _file_values(settings: Settings, path: Path) -> dict[str, dict[str, Any]]:
    """The file's keys by section, wherever (top level or [expert]) each was written."""
    known = {
        section.name: [key.name for key in dataclasses.fields(getattr(settings, section.name))]
        for section in dataclasses.fields(settings)
        if section.name not in SWITCHES
    }
    values = flatten(read_toml(path), known, source=str(path))
    return {**values.pop("", {}), **values}


def _env_overrides(settings: Settings, env: Mapping[str, str]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    names: list[str] = []
    for section in dataclasses.fields(settings):
        if section.name in SWITCHES:
            continue
        for key in dataclasses.fields(getattr(settings, section.name)):
            name = f"ASSISTANT_{section.name}_{key.name}".upper()
            names.append(name)
            if name in env:
                out.setdefault(section.name, {})[key.name] = env[name]
    _warn_unknown_env(env, names)
    return out


def _warn_unknown_env(env: Mapping[str, str], names: list[str]) -> None:
    """A variable named for a section but no key of it (ASSISTANT_RETRIEVAL_TOPK) was ignored
    without a word, the setting left as it was; it is said now, with the nearest name."""
    sections = {name.split("_")[1] for name in names}
    for var in env:
        parts = var.split("_")
        if len(parts) < 3 or parts[0] != "ASSISTANT" or parts[1] not in sections:
            continue
        if var not in names:
            match = difflib.get_close_matches(var, names, n=1, cutoff=0.7)
            hint = f" (did you mean {match[0]}?)" if match else ""
            warnings.warn(f"env: {var} is no setting, ignored{hint}", ConfigWarning, stacklevel=3)


def _apply(settings: Settings, values: Mapping[str, Any], source: str) -> None:
    """Known keys only: the file's were checked by config_file.flatten, the env's by name."""
    for section_name, section_values in values.items():
        if section_name in SWITCHES:
            settings.rerank = str(section_values)
            continue
        section = getattr(settings, section_name)
        types = {f.name: f.type for f in dataclasses.fields(section)}
        for key, raw in section_values.items():
            setattr(section, key, _coerce(raw, types[key], f"{source}: {section_name}.{key}"))


def _coerce(raw: Any, type_name: Any, where: str) -> Any:
    kinds = {"int": int, "float": float, "str": str, "bool": _parse_bool}
    convert = kinds[str(type_name)]
    try:
        return convert(raw)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: expected {type_name}, got {raw!r}") from exc


def _parse_bool(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in {"1", "true", "yes", "on"}:
        return True
    if text in {"0", "false", "no", "off"}:
        return False
    raise ValueError(raw)
