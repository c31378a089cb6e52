"""The idle scheduler's decisions (idle time, power), user activity across processes, and the
`--for` / `--until` deadlines."""

from __future__ import annotations

import os
import time
from datetime import datetime
from types import SimpleNamespace

import pytest

from assistant.config import Settings
from assistant.precompute.activity import Activity
from assistant.precompute.idle import IdleScheduler, on_ac
from assistant.precompute.schedule import deadline_from, in_window, next_time, parse_duration


def test_durations_and_times_of_day():
    assert parse_duration("2h") == 7200
    assert parse_duration("1h30m") == 5400
    assert parse_duration("90") == 5400  # bare number: minutes
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration("soon")
    now = datetime(2026, 11, 22, 23, 15)
    assert next_time("07:00", now) == datetime(2026, 11, 23, 7, 0)
    assert next_time("23:30", now) == datetime(2026, 11, 22, 23, 30)
    assert deadline_from(None, None, now) is None
    assert deadline_from("10m", None, now) == now.timestamp() + 600


def test_a_night_knows_whether_it_is_within_its_hours():
    """From its start up to (not at) its end, across midnight when it ends the next day; a
    night whose start and end are equal lasts the whole day."""

    def at(hour: int, minute: int = 0) -> datetime:
        return datetime(2026, 11, 22, hour, minute)

    inside = [at(1), at(3), at(6, 59)]
    outside = [at(0, 59), at(7), at(8, 30), at(23)]
    assert all(in_window("01:00", "07:00", t) for t in inside)
    assert not any(in_window("01:00", "07:00", t) for t in outside)
    assert all(in_window("23:00", "07:00", t) for t in (at(23), at(23, 30), at(0, 5), at(6)))
    assert not any(in_window("23:00", "07:00", t) for t in (at(7), at(12), at(22, 59)))
    assert in_window("07:00", "07:00", at(12))
    with pytest.raises(ValueError, match="not a time of day"):
        in_window("1am", "07:00", at(3))


def test_activity_ages_and_busy_markers(tmp_path):
    activity = Activity(tmp_path)
    assert activity.idle_seconds() == float("inf")
    activity.touch()
    assert activity.idle_seconds() < 5
    assert not activity.user_waiting()
    with activity.busy():
        assert activity.user_waiting()
        assert Activity(tmp_path).user_waiting()  # seen by another instance (process) too
    assert not activity.user_waiting()


def test_busy_marker_of_a_dead_process_is_ignored_and_removed(tmp_path):
    activity = Activity(tmp_path)
    dead = activity.run_dir / "busy-999999999-0"
    dead.touch()
    assert not activity.user_waiting()
    assert not dead.exists()


BUSY = (
    "import sys\n"
    "from pathlib import Path\n"
    "from assistant.precompute.activity import Activity\n"
    "with Activity(Path(sys.argv[1])).busy():\n"
    "    print('asking', flush=True)\n"
    "    sys.stdin.readline()\n"
)


def test_a_marker_left_by_a_killed_process_is_stale_even_once_its_pid_is_reused(tmp_path):
    """The app killed mid-question (a power cut) leaves its busy marker; after a reboot its pid
    belongs to some other process. The marker is stale all the same (nobody holds its lock):
    no user counts as waiting, and it is removed. A question running in another process is
    seen."""
    import subprocess
    import sys

    from tests.conftest import REPO

    activity = Activity(tmp_path)
    other = subprocess.Popen(["sleep", "60"])  # alive, with the dead app's pid
    try:
        left = activity.run_dir / f"busy-{other.pid}-0"
        left.touch()
        assert not activity.user_waiting() and not left.exists()
    finally:
        other.kill()
        other.wait()
    asking = subprocess.Popen(
        [sys.executable, "-c", BUSY, str(tmp_path)], cwd=REPO, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert asking.stdout.readline().strip() == "asking"
        assert activity.user_waiting()
    finally:
        asking.communicate("done\n", timeout=30)
    assert not activity.user_waiting()


def test_power_supply_reading(tmp_path):
    assert on_ac(tmp_path / "missing") is None
    (tmp_path / "BAT0").mkdir()
    (tmp_path / "BAT0" / "type").write_text("Battery\n")
    assert on_ac(tmp_path) is None  # no mains entry: the system does not say
    (tmp_path / "AC").mkdir()
    (tmp_path / "AC" / "type").write_text("Mains\n")
    (tmp_path / "AC" / "online").write_text("0\n")
    assert on_ac(tmp_path) is False
    (tmp_path / "AC" / "online").write_text("1\n")
    assert on_ac(tmp_path) is True


def _ctx(tmp_path, idle_minutes: float, ac_only: bool = False):
    settings = Settings()
    settings.precompute.idle_minutes = idle_minutes
    settings.precompute.ac_only = ac_only
    return SimpleNamespace(settings=settings, presence=Activity(tmp_path))


def _no_parts():
    raise AssertionError("a pass's parts are built only when one is due")


def test_precompute_is_due_only_after_the_idle_time_and_on_allowed_power(tmp_path):
    ctx = _ctx(tmp_path, idle_minutes=10)
    ctx.presence.touch()
    scheduler = IdleScheduler(ctx.settings.precompute, ctx.presence, _no_parts, power=lambda: False)
    assert not scheduler.due()
    past = time.time() - 11 * 60
    os.utime(ctx.presence.marker, (past, past))
    assert scheduler.due()
    ctx.settings.precompute.ac_only = True
    assert not scheduler.due()  # on battery
    assert IdleScheduler(
        ctx.settings.precompute, ctx.presence, _no_parts, power=lambda: None
    ).due()  # unknown power: allowed


def test_a_tick_does_nothing_while_the_user_is_active(tmp_path):
    ctx = _ctx(tmp_path, idle_minutes=10)
    ctx.presence.touch()
    assert (
        IdleScheduler(ctx.settings.precompute, ctx.presence, _no_parts).tick() is None
    )  # would need models if it ran


def test_precompute_on_battery_keeps_to_the_ac_only_setting(tmp_path, monkeypatch, capsys):
    """[precompute] ac_only holds for `assistant precompute` too, not only for the app's idle
    runs: on battery it does nothing and says why; without the setting or --ac-only it runs."""
    from assistant.cli import main
    from assistant.precompute import idle

    monkeypatch.setattr(idle, "on_ac", lambda *a: False)
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("[precompute]\nac_only = true\n", encoding="utf-8")
    assert main(["precompute", "--status", "--home", str(home)]) == 0
    assert "On battery power: nothing done ([precompute] ac_only)." in capsys.readouterr().err
    (home / "config.toml").write_text("[precompute]\nac_only = false\n", encoding="utf-8")
    assert main(["precompute", "--status", "--home", str(home)]) == 0
    assert "On battery power" not in capsys.readouterr().err
    assert main(["precompute", "--status", "--ac-only", "--home", str(home)]) == 0
    assert "nothing done (--ac-only)." in capsys.readouterr().err


def test_a_failed_idle_pass_is_logged_and_not_tried_again_at_once(tmp_path, caplog):
    """A model that will not load: the pass's error goes to the app's log (APScheduler's own
    logger has no handler), and the next ticks wait RETRY_SECONDS instead of failing anew
    every half minute."""
    from assistant.precompute import idle

    ctx = _ctx(tmp_path, idle_minutes=0)
    calls = []

    def broken_parts():
        calls.append(1)
        raise RuntimeError("the writer's model will not load")

    scheduler = IdleScheduler(ctx.settings.precompute, ctx.presence, broken_parts)
    with caplog.at_level("ERROR", logger="assistant"):
        assert scheduler.tick() is None
    assert "idle precompute failed" in caplog.text and "will not load" in caplog.text
    assert scheduler.tick() is None and calls == [1] and not scheduler.due()
    scheduler._retry_at = time.monotonic() - 1
    assert scheduler.due()
    assert idle.RETRY_SECONDS >= 300


def test_an_idle_pass_skipped_for_another_pass_says_so_once(tmp_path, caplog, monkeypatch):
    """While the night's timer runs its pass in its own process, every half-minute tick of the
    app's idle pass is skipped: the log said so each time, all night."""
    from assistant.precompute import idle
    from assistant.precompute.runner import PrecomputeBusy

    class Busy:
        def __init__(self, parts) -> None:
            pass

        def run(self, **kw):
            raise PrecomputeBusy("a precompute pass is running in process 4242")

    monkeypatch.setattr(idle, "Precompute", Busy)
    ctx = _ctx(tmp_path, idle_minutes=0)
    scheduler = IdleScheduler(ctx.settings.precompute, ctx.presence, lambda: None)
    with caplog.at_level("INFO", logger="assistant"):
        assert [scheduler.tick() for _ in range(3)] == [None] * 3
    said = [r for r in caplog.records if "skipped" in r.getMessage() and r.levelname == "INFO"]
    assert len(said) == 1 and "process 4242" in said[0].getMessage()
