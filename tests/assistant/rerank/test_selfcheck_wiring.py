"""The self-check wired into precompute, `stats` and the cache screen (real SmolLM2 writes the
predicted questions; the cross-encoder is the tiny random one: the wiring, not its quality)."""

from __future__ import annotations

import json

import pytest

from assistant.precompute.runner import Precompute
from assistant.rerank.selfcheck import CheckResult, ModeResult, RerankCheck, status
from assistant.tui.screens.cache import rerank_rows
from tests.assistant.test_precompute import make_ctx


def saved_check(path) -> RerankCheck:
    check = RerankCheck(path)
    check.add_probes([f"question {i}" for i in range(40)], 1)
    modes = {"cross": ModeResult(0.6, 2, 9, 0.99, 12.0)}
    check.save(CheckResult("2026-11-23T03:00:00+00:00", 40, 0.8, 1.5, modes, "off"), 40)
    return check


def test_the_cache_screen_rows_show_what_is_on_and_the_figures(tmp_path):
    rows = dict(rerank_rows(status("auto", "off", saved_check(tmp_path / "c.json"))))
    assert rows["Reranking"] == "auto → the fused order"
    assert "fused 0.80" in rows["Rerank check"] and "cross 0.60 (+2/−9" in rows["Rerank check"]
    assert "on: off" in rows["Rerank check"] and "14 CPU-s" in rows["Rerank check"]


def test_stats_shows_the_check(tmp_path, capsys, tiny_cross):
    from assistant.cli import main

    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(f'rerank = "auto"\n[reranker]\nmodel = "{tiny_cross}"\n')
    saved_check(home / "cache" / "rerank_check.json")
    assert main(["stats", "--home", str(home), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["reranking"]
    assert shown["setting"] == "auto" and shown["on"] == "off" and shown["probes"] == 40
    assert shown["check"]["modes"]["cross"]["losses"] == 9
    assert main(["stats", "--home", str(home)]) == 0
    assert "auto → the fused order" in capsys.readouterr().out


@pytest.mark.slow
def test_precompute_keeps_probes_and_runs_the_check(tmp_path, tiny_cross):
    ctx = make_ctx(tmp_path, stride=3)  # one chunk's detail questions
    ctx.settings.rerank, ctx.settings.reranker.model = "auto", str(tiny_cross)
    ctx.settings.reranker.auto_min_questions = 1
    runner = Precompute(ctx.precompute_parts(), settle_seconds=0)
    report = runner.run()
    probes = runner.check.probes(100)
    assert report.by_kind.get("predict_detail") == 1 and probes
    assert report.by_kind.get("rerank_check") == 1
    result = runner.check.result()
    assert result.questions == len(probes) and set(result.modes) == {"cross", "cross-pruned"}
    assert runner.status()["rerank"]["on"] == ctx.answerer().select.reranker.current
    assert (
        Precompute(ctx.precompute_parts(), settle_seconds=0).planner._plan_rerank_check() == 0
    )  # checked: not due


@pytest.mark.slow
def test_search_with_auto_follows_the_check(tmp_path, capsys, tiny_cross):
    from assistant.cli import main
    from tests.conftest import make_email, write_mbox

    mails = [make_email(subject=f"Mail {i}", body=f"Kitchen note number {i} about tiles {i}.",
                        msgid=f"<m{i}@x>") for i in range(8)]  # fmt: skip
    home = tmp_path / "h"
    assert main(["import", "--home", str(home), str(write_mbox(tmp_path / "b.mbox", mails))]) == 0
    (home / "config.toml").write_text(
        f'[reranker]\nmodel = "{tiny_cross}"\n[expert.reranker]\ncandidates = 6\n'
    )

    def search(*extra: str) -> list[str]:
        capsys.readouterr()
        assert main(["search", "--home", str(home), "--json", "-k", "3", *extra, "tiles"]) == 0
        return [r["message_id"] for r in json.loads(capsys.readouterr().out)]

    fused, cross = search(), search("--rerank", "cross")
    assert cross != fused  # the random cross-encoder orders them otherwise
    assert search("--rerank", "auto") == fused  # no check yet: the fused order
    check = RerankCheck(home / "cache" / "rerank_check.json")
    modes = {"cross": ModeResult(0.9, 9, 0, 0.002, 1.0)}
    check.save(CheckResult("2026-11-23T03:00:00+00:00", 40, 0.5, 1.0, modes, "cross"), 40)
    assert search("--rerank", "auto") == cross
