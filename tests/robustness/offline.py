"""A guard that refuses network sockets, for tests that prove a command never opens one.

In-process: `NetworkGuard().install(monkeypatch.setattr)` records each attempt and raises
NetworkBlocked. In a subprocess: `python -m tests.robustness.offline import --home H PATH` runs
the CLI with a fatal guard installed before anything else is imported: the first attempt ends the
process with exit status 97 at once, so a library that catches the error and carries on cannot
hide it.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Callable
from typing import Any, NoReturn

ATTEMPTED = 97
# the environment variables that would keep the hub libraries offline on their own: a process
# proven offline by the guard runs without them
ONLINE_HINTS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


class NetworkBlocked(OSError):
    """Raised instead of opening a network socket or resolving a name."""


class NetworkGuard:
    def __init__(self, fatal: bool = False) -> None:
        self.attempts: list[str] = []
        self.fatal = fatal

    def refuse(self, what: str) -> NoReturn:
        self.attempts.append(what)
        sys.stderr.write(f"network attempt blocked: {what}\n")
        if self.fatal:
            sys.stderr.flush()
            os._exit(ATTEMPTED)
        raise NetworkBlocked(f"a network socket was requested: {what}")

    def install(self, patch: Callable[[Any, str, Any], None]) -> NetworkGuard:
        """Patch the socket module through `patch` (monkeypatch.setattr, or the builtin setattr)."""
        guard = self

        class GuardedSocket(socket.socket):
            def __init__(self, family=-1, type=-1, proto=-1, fileno=None) -> None:
                # AF_UNIX (socketpair, local IPC) is no network; wrapping an fd opens nothing
                if fileno is None and family != socket.AF_UNIX:
                    guard.refuse(f"socket.socket(family={family!r}, type={type!r})")
                super().__init__(family, type, proto, fileno)

        def refusing(name: str) -> Callable[..., NoReturn]:
            return lambda *args, **kwargs: guard.refuse(f"socket.{name}{args[:2]!r}")

        patch(socket, "socket", GuardedSocket)
        for name in ("create_connection", "getaddrinfo", "gethostbyname", "gethostbyname_ex"):
            patch(socket, name, refusing(name))
        return self


if __name__ == "__main__":
    NetworkGuard(fatal=True).install(setattr)
    from assistant.cli import main

    sys.exit(main(sys.argv[1:]))
