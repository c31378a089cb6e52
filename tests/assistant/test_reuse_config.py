"""The KV reuse switch and repair policy: config file, then ASSISTANT_* env, then the command
line; bad values are clear errors; the badge says which reuse served an answer."""

from __future__ import annotations

import pytest

from assistant.cli.cli import build_parser
from assistant.cli.commands import apply_switches
from assistant.config import load_settings
from assistant.kv.reuse_policy import Repair, parse_repair
from assistant.llm.models import catalog, repair_for
from assistant.llm.reuse import repair_spans


def test_any_order_with_the_repair_measured_for_the_writer_is_the_default():
    """The repair "auto": the 1.5B writer quotes its evidence lines from the moved chunks ("none":
    it held its facts so, reuse_1_5b_*.json); the 135M model, a model not in the catalog or none
    named compute them over the placed chunks ("evidence"); a repair set by name is kept."""
    cache = load_settings(None, env={}).cache
    assert (cache.reuse, cache.repair) == ("any-order", "auto")
    qwen = catalog()["qwen2.5-coder-1.5b"]
    assert repair_for("auto", f"/models/{qwen.file}") == "none"
    assert repair_for("auto", "/models/SmolLM2-135M-Instruct.Q4_1.gguf") == "evidence"
    assert repair_for("auto", "/elsewhere/my-own-model.gguf") == "evidence"
    assert repair_for("auto", "") == "evidence"
    assert repair_for("sink-8", f"/models/{qwen.file}") == "sink-8"
    args = build_parser().parse_args(["ask", "q", "--repair", "auto"])
    settings = load_settings(None, env={"ASSISTANT_CACHE_REPAIR": "none"})
    apply_switches(settings, args)
    assert settings.cache.repair == "auto"


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
