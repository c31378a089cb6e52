"""`assistant night`: a systemd user timer where systemctl exists, a crontab line where it does
not; both removed again; the commands go through an injected runner (never the real ones)."""

from __future__ import annotations

import shutil

import pytest

from assistant import night


class FakeSystem:
    """Records the commands; keeps a crontab as `crontab -l` / `crontab -` would."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.table = "0 5 * * * backup.sh\n"

    def __call__(self, cmd, stdin=None):
        self.calls.append(list(cmd))
        if list(cmd) == ["crontab", "-l"]:
            return 0, self.table
        if list(cmd) == ["crontab", "-"]:
            self.table = stdin or ""
        return 0, ""


@pytest.fixture
def system(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return FakeSystem()


def with_tools(monkeypatch, *tools: str) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: f"/usr/bin/{name}" if name in tools else None)


def test_with_systemd_a_user_timer_starts_the_night_on_ac_power(tmp_path, system, monkeypatch):
    with_tools(monkeypatch, "systemctl")
    plan = night.Night(tmp_path / "home", "01:30", "06:45")
    done = night.install(plan, system)
    folder = tmp_path / "config" / "systemd" / "user"
    service = (folder / "assistant-night.service").read_text()
    timer = (folder / "assistant-night.timer").read_text()
    assert "OnCalendar=*-*-* 01:30:00" in timer and "ConditionACPower=true" in service
    assert "precompute --until 06:45 --ac-only" in service and str(tmp_path / "home") in service
    assert ["systemctl", "--user", "enable", "--now", "assistant-night.timer"] in system.calls
    assert any("wrote" in line for line in done)
    assert night.installed(system).startswith("systemd user timer")
    night.uninstall(system)
    assert not (folder / "assistant-night.timer").exists()
    assert night.installed(system) == "not installed"


def test_without_systemd_a_crontab_line_and_the_other_lines_kept(tmp_path, system, monkeypatch):
    with_tools(monkeypatch, "crontab")
    night.install(night.Night(tmp_path / "home", "02:05", "07:00", ac_only=False), system)
    night.install(night.Night(tmp_path / "home", "02:10", "07:00", ac_only=False), system)
    lines = system.table.splitlines()
    assert lines[0] == "0 5 * * * backup.sh" and len(lines) == 2  # installed once, replaced
    assert lines[1].startswith("10 2 * * * ") and lines[1].endswith(night.MARK)
    assert "--ac-only" not in lines[1]
    assert night.installed(system).startswith("crontab:")
    night.uninstall(system)
    assert system.table == "0 5 * * * backup.sh\n"


def test_a_bad_time_is_a_clear_error(tmp_path, system, monkeypatch):
    with_tools(monkeypatch, "crontab")
    with pytest.raises(ValueError, match="'25:00': a time is HH:MM"):
        night.install(night.Night(tmp_path, "25:00"), system)
    assert system.calls == []
