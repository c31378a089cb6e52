"""The CLI's stdout as the shell gives it (stdlib only, for `assistant --help` too): whether it
takes UTF-8 (`--json` escapes what is not ASCII where it does not), text that prints whole on
one that does not, and a reader that stops reading (`| head`)."""

from __future__ import annotations

import codecs
import sys


def utf8_stdout() -> bool:
    """Whether stdout's encoding holds every character (not so in a latin-1 locale, or a
    Windows pipe)."""
    encoding = getattr(sys.stdout, "encoding", None) or "ascii"
    try:
        return codecs.lookup(encoding).name.startswith("utf")
    except LookupError:
        return False


def tolerate_encoding() -> None:
    """A character stdout's encoding lacks prints as "?", not as a UnicodeEncodeError midway
    through the output (JSON escapes it instead, so that it stays whole)."""
    if not utf8_stdout() and hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="replace")


def stdout_to_nowhere() -> None:
    """The reader of stdout is gone (`| head`): what stdout still holds goes to /dev/null, so
    that Python's exit writes no traceback for it (as rich does for what it prints)."""
    import os
    from contextlib import suppress

    with suppress(OSError, ValueError):  # a stdout with no file (a test's) holds nothing
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
