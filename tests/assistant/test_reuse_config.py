"""The KV reuse switch and repair policy: config file, then ASSISTANT_* env, then the command
line; bad values are clear errors; the badge says which reuse served an answer."""

from __future__ import annotations

import pytest

from assistant.cli.cli import build_parser
from assistant.cli.commands import apply_switches
from assistant.config import load_settings
from assistant.kv.reuse_policy import Repair, parse_repair
from assistant.llm.reuse import repair_spans


def test_any_order_computing_the_evidence_lines_is_the_default():
    cache = load_settings(None, env={}).cache
    assert (cache.reuse, cache.repair) == ("any-order", "evidence")


def test_the_switch_round_trips_through_file_env_and_command_line(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[expert.cache]\nreuse = "any-order"\nrepair = "blend-15"\n')
    settings = load_settings(cfg, env={})
    assert (settings.cache.reuse, settings.cache.repair) == ("any-order", "blend-15")
    env = {"ASSISTANT_CACHE_REUSE": "exact", "ASSISTANT_CACHE_REPAIR": "none"}
    settings = load_settings(cfg, env=env)
    assert (settings.cache.reuse, settings.cache.repair) == ("exact", "none")
    args = build_parser().parse_args(["ask", "q", "--reuse", "any-order", "--repair", "sink-4"])
    apply_switches(settings, args)
    assert (settings.cache.reuse, settings.cache.repair) == ("any-order", "sink-4")
    apply_switches(settings, build_parser().parse_args(["ask", "q"]))  # no switch: unchanged
    assert (settings.cache.reuse, settings.cache.repair) == ("any-order", "sink-4")


def test_a_bad_repair_on_the_command_line_is_refused(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["ask", "q", "--repair", "sink-0"])
    assert "expected none, sink-N" in capsys.readouterr().err


def test_repair_spans():
    placed = [(100, 50), (150, 5)]
    assert repair_spans(parse_repair("none"), placed) == []
    assert repair_spans(parse_repair("sink-8"), placed) == [(100, 108), (150, 155)]
    blend = repair_spans(parse_repair("blend-20"), [(100, 80)])  # 16 tokens: 2 runs of 8
    assert blend == [(100, 108), (140, 148)]
    assert repair_spans(parse_repair("blend-100"), [(0, 30)]) == [(0, 30)]
    assert parse_repair("blend-10") == Repair("blend", 10)
    assert repair_spans(parse_repair("evidence"), placed) == []  # no chunk token is re-decoded
