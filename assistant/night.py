"""The night without the app open: a systemd user timer (a crontab line where there is no systemd)
that starts `assistant precompute --until MORNING` at a set hour, on AC power only by default.
What is run on the system goes through a `Runner`, so tests never touch the real systemctl or
crontab."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

UNIT = "assistant-night"
MARK = "# assistant-night"  # ends the crontab line this module owns

# runs a command, returns (exit code, stdout); input is fed to stdin
Runner = Callable[[Sequence[str], str | None], tuple[int, str]]


def system_runner(cmd: Sequence[str], stdin: str | None = None) -> tuple[int, str]:
    done = subprocess.run(list(cmd), input=stdin, capture_output=True, text=True, check=False)
    return done.returncode, done.stdout


@dataclass(frozen=True)
class Night:
    home: Path
    start: str = "01:00"  # HH:MM, local time
    until: str = "07:00"
    ac_only: bool = True

    def command(self) -> list[str]:
        cmd = [sys.executable, "-m", "assistant.cli", "--home", str(self.home), "precompute",
               "--until", self.until]  # fmt: skip
        return cmd + (["--ac-only"] if self.ac_only else [])


def unit_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "systemd" / "user"


def units(night: Night) -> dict[str, str]:
    """The service and timer files."""
    power = "ConditionACPower=true\n" if night.ac_only else ""
    service = (
        "[Unit]\nDescription=Mail assistant: the night's precompute\n" + power
        + "\n[Service]\nType=oneshot\nNice=10\n"
        + f"ExecStart={shlex.join(night.command())}\n"
    )  # fmt: skip
    timer = (
        "[Unit]\nDescription=Mail assistant: start the night\n\n[Timer]\n"
        f"OnCalendar=*-*-* {night.start}:00\nPersistent=false\n\n"
        "[Install]\nWantedBy=timers.target\n"
    )
    return {f"{UNIT}.service": service, f"{UNIT}.timer": timer}


def cron_line(night: Night) -> str:
    hour, minute = night.start.split(":")
    return f"{int(minute)} {int(hour)} * * * {shlex.join(night.command())} {MARK}"


def install(night: Night, run: Runner = system_runner) -> list[str]:
    """Install the night; returns what was done, a line each."""
    _check_time(night.start), _check_time(night.until)
    if shutil.which("systemctl"):
        folder = unit_dir()
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in units(night).items():
            (folder / name).write_text(text, encoding="utf-8")
        done = [f"wrote {folder / name}" for name in units(night)]
        for cmd in (["systemctl", "--user", "daemon-reload"],
                    ["systemctl", "--user", "enable", "--now", f"{UNIT}.timer"]):  # fmt: skip
            code, _ = run(cmd, None)
            done.append(f"{shlex.join(cmd)}: {'ok' if code == 0 else f'exit {code}'}")
        return done
    lines = [x for x in _crontab(run) if not x.endswith(MARK)] + [cron_line(night)]
    code, _ = run(["crontab", "-"], "\n".join(lines) + "\n")
    return [f"crontab: {cron_line(night)} ({'ok' if code == 0 else f'exit {code}'})"]


def uninstall(run: Runner = system_runner) -> list[str]:
    done = []
    folder = unit_dir()
    if (folder / f"{UNIT}.timer").exists():
        run(["systemctl", "--user", "disable", "--now", f"{UNIT}.timer"], None)
        for name in (f"{UNIT}.service", f"{UNIT}.timer"):
            (folder / name).unlink(missing_ok=True)
            done.append(f"removed {folder / name}")
    if shutil.which("crontab"):
        lines = _crontab(run)
        kept = [x for x in lines if not x.endswith(MARK)]
        if len(kept) != len(lines):
            run(["crontab", "-"], "\n".join(kept) + "\n" if kept else "")
            done.append("removed the crontab line")
    return done or ["nothing was installed"]


def installed(run: Runner = system_runner) -> str:
    """How the night is installed: the timer, the crontab line, or "not installed"."""
    if (unit_dir() / f"{UNIT}.timer").exists():
        return f"systemd user timer ({unit_dir() / (UNIT + '.timer')})"
    if shutil.which("crontab"):
        line = next((x for x in _crontab(run) if x.endswith(MARK)), None)
        if line:
            return f"crontab: {line}"
    return "not installed"


def _crontab(run: Runner) -> list[str]:
    code, out = run(["crontab", "-l"], None)
    return [x for x in out.splitlines() if x.strip()] if code == 0 else []


def _check_time(text: str) -> None:
    hour, _, minute = text.partition(":")
    if not (hour.isdigit() and minute.isdigit() and int(hour) < 24 and int(minute) < 60):
        raise ValueError(f"{text!r}: a time is HH:MM, e.g. 01:00")
