"""The app's resident memory while chatting, for bench/start.py: the real TUI on a home, headless
(Textual's test driver), asked a few questions one after another through its input box, as a
user types them. Run as its own process; prints one JSON line: per question the seconds to the
first words on screen and to the answer's end, and the process's resident memory (VmRSS) after
each answer; the peak (VmHWM) at the end.

    python bench/_chat.py HOME "question one" "question two" ...
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

# ruff: noqa: E402
import asyncio
import json
import sys
import time
from pathlib import Path

# this checkout's packages, not bench/'s own modules of the same name (bench/cache.py)
sys.path[0] = str(Path(__file__).resolve().parent.parent)

SIZE = (140, 44)
TIMEOUT_S = 600.0


def status_kib(field: str) -> int:
    """A memory field of /proc/self/status (VmRSS, VmHWM) in KiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


async def wait_until(pilot, condition, timeout: float = TIMEOUT_S) -> float:
    """Seconds until `condition()` holds, letting the app run meanwhile."""
    start = time.perf_counter()
    while not condition():
        if time.perf_counter() - start > timeout:
            raise SystemExit(f"no answer within {timeout:.0f} s")
        await pilot.pause(0.02)
    return time.perf_counter() - start


async def chat(home: Path, questions: list[str]) -> dict:
    from assistant.services import open_services
    from assistant.tui.app import make_app
    from assistant.tui.screens.chat import ChatScreen
    from assistant.tui.widgets.turn import Turn

    app = make_app(open_services(home))
    turns = []
    async with app.run_test(size=SIZE) as pilot:
        started = status_kib("VmRSS")
        for question in questions:
            await pilot.press(*question, "enter")
            screen = app.screen
            assert isinstance(screen, ChatScreen), type(screen)
            turn = screen.query_one(f"#turn-{screen.turn}", Turn)
            first = await wait_until(pilot, lambda t=turn: t.text.strip() != "")
            total = first + await wait_until(pilot, lambda t=turn: not t.running)
            turns.append(
                {"first_words_s": first, "answer_s": total, "rss_mib": status_kib("VmRSS") / 1024}
            )
    return {"rss_open_mib": started / 1024, "turns": turns, "peak_mib": status_kib("VmHWM") / 1024}


def main() -> None:
    home, questions = Path(sys.argv[1]), sys.argv[2:]
    if not questions:
        raise SystemExit("usage: python bench/_chat.py HOME QUESTION ...")
    print(json.dumps(asyncio.run(chat(home, questions))))


if __name__ == "__main__":
    main()
