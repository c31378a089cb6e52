"""The night without the app open: a systemd user timer (a crontab line where there is no
systemctl) that runs `assistant precompute --from START --until MORNING` at a set hour (only
within that night: a timer that fires on waking from sleep runs nothing), on mains power only
by default. Commands go through an injected runner, so tests never touch the real systemctl or
crontab."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

UNIT = "assistant-night"
MARK = "# assistant-night"  # ends the crontab line, so uninstall finds it
REFUSED = "failed:"  # begins the line of a step that did not work
NOT_INSTALLED = "the night is not installed"
Run = Callable[[Sequence[str], str | None], tuple[int, str]]  # (argv, stdin) → (rc, stdout)
Which = Callable[[str], str | None]


def run_command(argv: Sequence[str], stdin: str | None = None) -> tuple[int, str]:
    done = subprocess.run(list(argv), input=stdin, capture_output=True, text=True, check=False)
    return done.returncode, done.stdout if done.returncode == 0 else done.stderr or done.stdout


_HHMM = re.compile(r"([01]?\d|2[0-3]):([0-5]\d)")


def time_of_day(text: str, name: str) -> str:
    """`text` as HH:MM, or a ValueError naming the switch: checked before anything is written,
    since a timer with a bad time fails every night, unseen."""
    match = _HHMM.fullmatch(text.strip())
    if not match:
        raise ValueError(f"{name}: not a time of day: {text!r} (a 24-hour time, like 07:00)")
    return f"{int(match[1]):02d}:{match[2]}"


@dataclass(frozen=True)
class Night:
    home: Path
    start: str = "01:00"  # local time the night starts
    morning: str = "07:00"  # and stops
    ac_only: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "start", time_of_day(self.start, "--at"))
        object.__setattr__(self, "morning", time_of_day(self.morning, "--until"))
        if self.start == self.morning:  # else a night of 24 hours: the app's machine all day
            raise ValueError(f"--at and --until are both {self.start}: the night would never end")

    def command(self) -> list[str]:
        argv = [sys.executable, "-m", "assistant.cli", "precompute", "--home", str(self.home)]
        # the night's start too: a timer that elapsed while the machine slept fires on waking,
        # and that run, outside the night, does nothing (else it ran until the next morning)
        window = ["--from", self.start, "--until", self.morning]
        return argv + window + (["--ac-only"] if self.ac_only else [])


def unit_dir(env: Mapping[str, str]) -> Path:
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".config")
    return Path(base) / "systemd" / "user"


def service_text(night: Night) -> str:
    return (
        "[Unit]\nDescription=assistant: the night's precompute\n\n"
        f"[Service]\nType=oneshot\nNice=10\nExecStart={_systemd_join(night.command())}\n"
    )


def timer_text(night: Night) -> str:
    return (
        "[Unit]\nDescription=assistant: start the night's precompute\n\n"
        f"[Timer]\nOnCalendar=*-*-* {night.start}:00\n\n[Install]\nWantedBy=timers.target\n"
    )


def cron_line(night: Night) -> str:
    hour, minute = night.start.split(":")
    command = shlex.join(night.command()).replace("%", "\\%")  # cron reads % as a newline
    return f"{int(minute)} {int(hour)} * * * {command} {MARK}"


def _systemd_join(argv: Sequence[str]) -> str:
    """ExecStart's words: a word with a space or a quote double-quoted, and systemd's own
    specifiers and variables (%, $) doubled, so a home under "Application Support" stays one."""
    words = []
    for arg in argv:
        arg = arg.replace("%", "%%").replace("$", "$$")
        if re.search(r"[\s\"'\\]", arg):
            arg = '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'
        words.append(arg)
    return " ".join(words)


def install(night: Night, env: Mapping[str, str], run: Run, which: Which) -> list[str]:
    """Install the night's timer; return what was done, a line each."""
    done: list[str] = []
    if which("systemctl"):
        folder = unit_dir(env)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{UNIT}.service").write_text(service_text(night), encoding="utf-8")
        (folder / f"{UNIT}.timer").write_text(timer_text(night), encoding="utf-8")
        done = [f"wrote {folder / UNIT}.service and .timer"]
        steps = _systemctl(run, ["daemon-reload"], ["enable", "--now", f"{UNIT}.timer"])
        if not any(line.startswith(REFUSED) for line in steps):
            return done + steps
        # no user session to run the timer (a container, an ssh login without lingering): the
        # units would sit there, reported as installed, and never fire; a crontab line instead
        for suffix in ("timer", "service"):
            (folder / f"{UNIT}.{suffix}").unlink(missing_ok=True)
        done = [*steps, f"removed {folder / UNIT}.service and .timer: the timer cannot run"]
    if which("crontab"):
        lines = [*_cron_lines(run), cron_line(night)]
        rc, _ = run(["crontab", "-"], "\n".join(lines) + "\n")
        if rc != 0:
            return [*done, f"crontab refused the line (exit {rc}): {lines[-1]}"]
        return [*done, f"added to the crontab: {lines[-1]}"]
    command = shlex.join(["assistant", *night.command()[3:]])
    by_hand = f"at {night.start}, run `{command}` from a scheduler"
    if done:
        return [*done, f"{NOT_INSTALLED}: no crontab either; {by_hand}"]
    return [f"{NOT_INSTALLED}: neither systemctl nor crontab found; {by_hand}"]


def uninstall(env: Mapping[str, str], run: Run, which: Which) -> list[str]:
    done = []
    folder = unit_dir(env)
    if (folder / f"{UNIT}.timer").exists():
        if which("systemctl"):
            done += _systemctl(run, ["disable", "--now", f"{UNIT}.timer"])
        for suffix in ("timer", "service"):
            (folder / f"{UNIT}.{suffix}").unlink(missing_ok=True)
        done.append(f"removed {folder / UNIT}.service and .timer")
    if which("crontab"):
        before = _cron_lines(run, keep_ours=True)
        kept = [line for line in before if not line.endswith(MARK)]
        if kept != before:
            run(["crontab", "-"], "\n".join(kept) + "\n" if kept else "")
            done.append("removed the crontab line")
    return done or ["nothing was installed"]


def installed(env: Mapping[str, str], run: Run, which: Which) -> str | None:
    """How the night is installed: the timer's file, the crontab line, or None."""
    timer = unit_dir(env) / f"{UNIT}.timer"
    if timer.exists():
        return f"systemd user timer {timer}"
    if which("crontab"):
        ours = [line for line in _cron_lines(run, keep_ours=True) if line.endswith(MARK)]
        if ours:
            return f"crontab: {ours[0]}"
    return None


def _systemctl(run: Run, *calls: list[str]) -> list[str]:
    """Each call's line; the first that fails ends them, with what systemctl said."""
    done = []
    for args in calls:
        rc, said = run(["systemctl", "--user", *args], None)
        line = f"systemctl --user {' '.join(args)}"
        if rc != 0:
            return [*done, f"{REFUSED} {line} (exit {rc}): {said.strip() or 'no message'}"]
        done.append(line)
    return done


def _cron_lines(run: Run, keep_ours: bool = False) -> list[str]:
    """The user's crontab lines (none when there is no crontab yet), ours left out."""
    rc, out = run(["crontab", "-l"], None)
    lines = out.splitlines() if rc == 0 else []
    return [line for line in lines if keep_ours or not line.endswith(MARK)]


def default_which(name: str) -> str | None:
    return shutil.which(name)
