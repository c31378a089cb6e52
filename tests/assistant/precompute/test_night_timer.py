"""`assistant night install | uninstall | status` (assistant/precompute/timer.py): unit files
under a tmp XDG_CONFIG_HOME, a crontab line where there is no systemctl; commands through a fake
runner, never the real systemctl or crontab."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from assistant.cli import main
from assistant.precompute import timer


class Recorder:
    """Stands in for systemctl and crontab: records each call, keeps a crontab's text."""

    def __init__(self, crontab: str | None = None) -> None:
        self.calls: list[list[str]] = []
        self.crontab = crontab

    def __call__(self, argv, stdin=None):
        self.calls.append(list(argv))
        if argv[:2] == ["crontab", "-l"]:
            return (1, "") if self.crontab is None else (0, self.crontab)
        if argv[:2] == ["crontab", "-"]:
            self.crontab = stdin
        return 0, ""


def _which(*present):
    return lambda name: f"/usr/bin/{name}" if name in present else None


def test_install_writes_the_user_units_and_enables_the_timer(tmp_path):
    env, run = {"XDG_CONFIG_HOME": str(tmp_path / "cfg")}, Recorder()
    night = timer.Night(tmp_path / "home", "01:30", "06:45")
    done = timer.install(night, env, run, _which("systemctl", "crontab"))
    folder = tmp_path / "cfg" / "systemd" / "user"
    service = (folder / "assistant-night.service").read_text()
    assert "precompute --home" in service and "--until 06:45 --ac-only" in service
    assert "OnCalendar=*-*-* 01:30:00" in (folder / "assistant-night.timer").read_text()
    assert run.calls == [
        ["systemctl", "--user", "daemon-reload"],
        ["systemctl", "--user", "enable", "--now", "assistant-night.timer"],
    ]
    assert len(done) == 3
    assert timer.installed(env, run, _which("systemctl")).startswith("systemd user timer")
    timer.uninstall(env, run, _which("systemctl"))
    assert not list(folder.iterdir())
    assert run.calls[-1] == ["systemctl", "--user", "disable", "--now", "assistant-night.timer"]


def test_without_systemctl_a_crontab_line_is_added_and_removed_leaving_the_users_own(tmp_path):
    env, run = {"HOME": str(tmp_path)}, Recorder("0 5 * * * backup.sh\n")
    timer.install(timer.Night(tmp_path / "h", ac_only=False), env, run, _which("crontab"))
    lines = run.crontab.splitlines()
    assert lines[0] == "0 5 * * * backup.sh"
    assert lines[1].startswith("0 1 * * * ") and "--until 07:00" in lines[1]
    assert "--ac-only" not in lines[1] and lines[1].endswith(timer.MARK)
    timer.install(timer.Night(tmp_path / "h"), env, run, _which("crontab"))  # again: one line
    assert sum(line.endswith(timer.MARK) for line in run.crontab.splitlines()) == 1
    assert timer.installed(env, run, _which("crontab")).startswith("crontab: ")
    timer.uninstall(env, run, _which("crontab"))
    assert run.crontab == "0 5 * * * backup.sh\n"
    assert not any(c[0] == "systemctl" for c in run.calls)


def test_night_status_and_install_through_the_cli(tmp_path, monkeypatch, capsys):
    run = Recorder()
    monkeypatch.setattr(timer, "run_command", run)
    monkeypatch.setattr(timer, "default_which", _which("systemctl"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    home = str(tmp_path / "home")
    assert main(["night", "install", "--home", home, "--at", "02:00"]) == 0
    assert "systemctl --user enable --now assistant-night.timer" in capsys.readouterr().out
    assert main(["night", "status", "--home", home]) == 0
    out = capsys.readouterr().out
    assert "installed: systemd user timer" in out and "no night yet" in out
    assert Path(tmp_path / "cfg/systemd/user/assistant-night.timer").exists()


@pytest.mark.parametrize("kinds", [{"chunk_kv": 4, "populate": 2, "decode": 1}])
def test_the_last_night_is_said_in_jobs_nodes_and_answers(kinds):
    from assistant.cli.commands_night import last_night

    finished = "2026-11-27T06:30:00+00:00"
    last = {"finished": finished, "stopped": "deadline", "minutes": 52.0, "jobs": 7,
            "by_kind": kinds}  # fmt: skip
    said = last_night(last)
    assert "52.0 min, 7 jobs: 4 nodes (5 an hour), 2 predicted questions, 1 answered" in said
    # the user's own clock, to the minute, not the stored UTC timestamp
    local = datetime.fromisoformat(finished).astimezone().strftime("%Y-%m-%d %H:%M")
    assert f"last night (ended {local}, deadline)" in said and "+00:00" not in said
    assert last_night({**last, "finished": "unknown"}).startswith("last night (ended unknown,")


def test_the_night_says_what_it_puts_first_and_why():
    from assistant.cli.commands_night import balance
    from cache.prediction import Savings

    said = balance(Savings(kv_tokens=1800, predicted_hits=2, mean_prompt=2100.0))
    assert said.startswith("predictions first: KV nodes saved 1,800 prompt tokens")
    assert "answered predictions 4,200 (2 hits) in the last 7 days" in said
    assert balance(Savings(1800, 0, 2100.0)).startswith("KV nodes first")


def test_a_home_with_a_space_stays_one_word_and_a_bad_time_writes_nothing(
    tmp_path, monkeypatch, capsys
):
    """macOS's home is under "Application Support": the unit's ExecStart and the crontab line
    keep it one argument (and cron's % escaped); "1am" is refused before anything is written,
    "1:05" kept as 01:05; a crontab that refuses the line is said, not "added"."""
    import shlex

    home = tmp_path / "Application Support" / "50% mail"
    night = timer.Night(home, "1:05", "7:00")
    assert (night.start, night.morning) == ("01:05", "07:00")
    service = timer.service_text(night)
    assert f'--home "{str(home).replace("%", "%%")}" --from 01:05 --until 07:00' in service
    line = timer.cron_line(night)
    assert line.startswith("5 1 * * * ") and line.endswith(timer.MARK)
    words = shlex.split(line[len("5 1 * * * ") : -len(timer.MARK)].replace("\\%", "%"))
    assert words[words.index("--home") + 1] == str(home)
    for bad in ("1am", "25:00", "7"):
        with pytest.raises(ValueError, match="not a time of day"):
            timer.Night(home, bad)
    run = Recorder()
    monkeypatch.setattr(timer, "run_command", run)
    monkeypatch.setattr(timer, "default_which", _which("systemctl"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert main(["night", "install", "--home", str(tmp_path / "h"), "--until", "7am"]) == 2
    assert "--until: not a time of day: '7am'" in capsys.readouterr().err
    argv = ["night", "install", "--home", str(tmp_path / "h"), "--at", "7:00", "--until", "07:00"]
    assert main(argv) == 2  # a night of 24 hours: the app's machine busy all day
    assert "--at and --until are both 07:00" in capsys.readouterr().err
    assert run.calls == [] and not (tmp_path / "cfg").exists()
    refusing = Recorder()

    def refusing_run(argv, stdin=None):  # crontab that will not take the new table
        return (1, "") if argv == ["crontab", "-"] else refusing(argv, stdin)

    done = timer.install(night, {"HOME": str(tmp_path)}, refusing_run, _which("crontab"))
    assert done[0].startswith("crontab refused the line (exit 1)")


def test_a_timer_that_fires_after_the_night_does_nothing_and_loads_nothing(
    tmp_path, monkeypatch, capsys
):
    """A systemd timer that elapsed while the laptop slept fires when it wakes, in the morning:
    the night's command then finds itself outside its hours and does nothing, instead of
    precomputing all day until the next morning with the user at the machine."""
    from datetime import timedelta

    from assistant.services import Services

    def no_parts(self):
        raise AssertionError("a night outside its hours builds no part and loads no model")

    monkeypatch.setattr(Services, "precompute_parts", no_parts)
    now = datetime.now()
    start, morning = ((now + timedelta(hours=h)).strftime("%H:%M") for h in (2, 3))
    night = timer.Night(tmp_path / "home", start, morning, ac_only=False)
    argv = night.command()
    assert argv[1:3] == ["-m", "assistant.cli"] and f"--from {start}" in " ".join(argv)
    assert main(argv[3:]) == 0
    assert f"Outside the night ({start} to {morning}): nothing done." in capsys.readouterr().err
    assert main(["precompute", "--home", str(tmp_path / "home"), "--from", start]) == 2
    assert "--from needs --until" in capsys.readouterr().err


def test_a_timer_systemd_cannot_run_is_not_left_as_installed(tmp_path, monkeypatch, capsys):
    """Where `systemctl --user` reaches no user session (a container, an ssh login without
    lingering) install wrote the units, printed "(exit 1)" twice and exited 0, and status said
    "installed: systemd user timer" for a timer that never fires. Now the units are taken away
    again, systemctl's own words are shown, a crontab line is added where there is a crontab,
    and where there is none the night is said not installed, with exit 1."""

    def no_bus(argv, stdin=None):
        if argv[0] == "systemctl":
            return 1, "Failed to connect to bus: No medium found\n"
        return cron(argv, stdin)

    cron = Recorder()
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "HOME": str(tmp_path)}
    folder = tmp_path / "cfg" / "systemd" / "user"
    done = timer.install(timer.Night(tmp_path / "h"), env, no_bus, _which("systemctl", "crontab"))
    assert "(exit 1): Failed to connect to bus: No medium found" in done[0]
    assert not list(folder.iterdir()) and done[-1].startswith("added to the crontab: ")
    assert timer.installed(env, no_bus, _which("systemctl", "crontab")).startswith("crontab: ")

    monkeypatch.setattr(timer, "run_command", no_bus)
    monkeypatch.setattr(timer, "default_which", _which("systemctl"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg2"))
    assert main(["night", "install", "--home", str(tmp_path / "h")]) == 1
    out = capsys.readouterr().out
    assert "Failed to connect to bus" in out and "the night is not installed" in out
    assert not list((tmp_path / "cfg2" / "systemd" / "user").iterdir())
    assert main(["night", "status", "--home", str(tmp_path / "h")]) == 0
    assert "installed: no" in capsys.readouterr().out
