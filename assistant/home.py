"""Paths under the assistant's home directory, created private to the user (0700 / 0600)."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

import assistant
from cache.files import FILE_MODE
from cache.files import replace_atomically as replace_atomically  # the app's files: the same

log = logging.getLogger(__name__)

DIR_MODE = 0o700


def default_home() -> Path:
    """$ASSISTANT_HOME, else the platform's user data dir."""
    env = os.environ.get("ASSISTANT_HOME")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_data_path

    return user_data_path("mail-assistant", appauthor=False)


@dataclass(frozen=True)
class Home:
    root: Path

    @property
    def config_file(self) -> Path:
        return self.root / "config.toml"

    @property
    def knowledge_db(self) -> Path:
        return self.root / "knowledge.db"

    @property
    def index_dir(self) -> Path:
        return self.root / "index"

    @property
    def cache_dir(self) -> Path:
        return self.root / "cache"

    @property
    def models_dir(self) -> Path:
        """Model files the app derives once: the joined reranker GGUF, torch weights."""
        return self.root / "models"

    @property
    def log_dir(self) -> Path:
        return self.root / "logs"

    def ensure(self) -> Home:
        for d in (self.root, self.index_dir, self.cache_dir, self.log_dir):
            make_private_dir(d)
        return self


def make_private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    os.chmod(path, DIR_MODE)
    return path


def touch_private(path: Path) -> Path:
    """Create `path` readable by the owner only (before SQLite or a writer opens it)."""
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, FILE_MODE)
    os.close(fd)
    os.chmod(path, FILE_MODE)
    return path


class HomeError(RuntimeError):
    """The home folder cannot be made or used; the message names it and what to do."""


def open_home(root: Path | str | None = None) -> Home:
    """The home at `root` (else the default), made private if new. Kept absolute: the night's
    timer and a later run from another folder name the same one."""
    path = (Path(root).expanduser() if root else default_home()).absolute()
    try:
        return Home(path).ensure()
    except FileExistsError:
        raise HomeError(f"{path}: a file, not a folder; choose another --home") from None
    except OSError as exc:
        raise HomeError(
            f"{path}: cannot be used as the home folder ({exc.strerror or exc}); choose another "
            "--home, or make it yours (an earlier run with sudo leaves it root's)"
        ) from None


def bundled(name: str) -> Path:
    """A folder shipped with the app (`data`, `prompts`): in the wheel, or in the source tree."""
    package = Path(assistant.__file__).parent
    for candidate in (package / "_bundled" / name, package.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"the {name}/ folder is not installed with the app ({package})")


def kept(directory: Path, prefix: str, name: str, read, make, write, what: str):
    """What `make()` builds, kept as the text `write(it)` in `directory`/`prefix``name`.json for
    the next process, which `read(text)`s it back; the files of `prefix` by other names (another
    version of the knowledge bank, other rules) removed once it is saved. A file that cannot be
    read is made again; one that cannot be written (a full disk, a read-only home) is said, and
    what was made is used all the same. `what` names it in those messages."""
    path = directory / f"{prefix}{name}.json"
    if path.exists():
        try:
            return read(path.read_text("utf-8"))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("%s: unreadable %s (%s); made again", path, what, exc)
    made = make()
    try:
        make_private_dir(directory)
        text = write(made)
        replace_atomically(path, lambda tmp: tmp.write_text(text, "utf-8"), ".json")
        for old in directory.glob(f"{prefix}*.json"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError as exc:
        log.warning("%s: could not save the %s (%s)", path, what, exc)
    return made
