"""A guard that refuses network sockets, for tests that prove a command never opens one.

In-process: `NetworkGuard().install(monkeypatch.setattr)`. In a subprocess:
`python -m tests.robustness.offline import --home H PATH` runs the CLI with the guard installed
before anything else is imported, and exits 97 if anything tried the network (even if it caught
the error and carried on).
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable
from typing import Any, NoReturn

ATTEMPTED = 97


class NetworkBlocked(OSError):
    """Raised instead of opening a network socket or resolving a name."""


class NetworkGuard:
    def __init__(self) -> None:
        self.attempts: list[str] = []

    def refuse(self, what: str) -> NoReturn:
        self.attempts.append(what)
        sys.stderr.write(f"network attempt blocked: {what}\n")
        raise NetworkBlocked(f"a network socket was requested: {what}")

    def install(self, setattr: Callable[[Any, str, Any], None]) -> NetworkGuard:
        """Patch the socket module through `setattr` (monkeypatch.setattr, or the builtin)."""
        guard = self

        class GuardedSocket(socket.socket):
            def __init__(self, family=-1, type=-1, proto=-1, fileno=None) -> None:
                # AF_UNIX (socketpair, local IPC) is no network; wrapping an fd opens nothing
                if fileno is None and family != socket.AF_UNIX:
                    guard.refuse(f"socket.socket(family={family!r}, type={type!r})")
                super().__init__(family, type, proto, fileno)

        def refusing(name: str) -> Callable[..., NoReturn]:
            return lambda *args, **kwargs: guard.refuse(f"socket.{name}{args[:2]!r}")

        setattr(socket, "socket", GuardedSocket)
        for name in ("create_connection", "getaddrinfo", "gethostbyname", "gethostbyname_ex"):
            setattr(socket, name, refusing(name))
        return self


def main(argv: list[str]) -> int:
    guard = NetworkGuard().install(setattr)
    from assistant.cli import main as cli_main

    try:
        rc = cli_main(argv)
    finally:
        if guard.attempts:
            sys.stderr.write(f"{len(guard.attempts)} network attempt(s): {guard.attempts}\n")
    return ATTEMPTED if guard.attempts else rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
