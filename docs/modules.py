"""Write docs/modules.md: every module of `assistant/` and `cache/`, room by room, each with the
first sentence of its own docstring. The module map in ../shared/ARCHITECTURE.md names rooms;
this page names the modules in them, and a test (tests/test_module_map.py) fails when a module
is added, moved or removed without it being written again.

    python3 docs/modules.py
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PAGE = REPO / "docs" / "modules.md"
PACKAGES = ("assistant", "cache")
LONGEST = 200  # characters of a sentence kept
HEAD = """# Modules, room by room

Every module of `assistant/` and `cache/`, with the first sentence of its docstring. The rooms
and the direction of imports are drawn in the architecture map; this page is written by
`python3 docs/modules.py` (tests/test_module_map.py checks it is current).
"""


def first_sentence(path: Path) -> str:
    """The docstring's first sentence, on one line ("(no docstring)" when it has none)."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "(no docstring)"
    paragraph = " ".join(doc.split("\n\n")[0].split())
    match = re.match(r"(.+?\.)(\s|$)", paragraph)
    sentence = match.group(1) if match else paragraph
    if len(sentence) > LONGEST:
        sentence = sentence[:LONGEST].rsplit(" ", 1)[0] + " …"
    return sentence


def modules() -> dict[str, list[Path]]:
    """Module files by room (their folder relative to the repository), rooms in path order."""
    rooms: dict[str, list[Path]] = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            rooms.setdefault(str(path.parent.relative_to(REPO)), []).append(path)
    return dict(sorted(rooms.items()))


def page() -> str:
    out = [HEAD]
    for room, paths in modules().items():
        out.append(f"\n## `{room}/`\n")
        for path in paths:
            out.append(f"- `{path.name}`: {first_sentence(path)}")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    PAGE.write_text(page(), encoding="utf-8")
    print(f"wrote {PAGE.relative_to(REPO)}")
