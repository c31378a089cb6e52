"""docs/modules.md names every module of assistant/ and cache/ as the code is now: a module added,
moved or removed without the page written again (python3 docs/modules.py) fails here."""

from __future__ import annotations

import importlib.util

from tests.conftest import REPO


def _page_module():
    spec = importlib.util.spec_from_file_location("modules_page", REPO / "docs" / "modules.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_module_page_is_current():
    page = _page_module()
    assert page.PAGE.read_text(encoding="utf-8") == page.page(), "run: python3 docs/modules.py"


def test_every_module_has_a_docstring_to_name_it_by():
    page = _page_module()
    text = page.PAGE.read_text(encoding="utf-8")
    for room, paths in page.modules().items():
        assert f"## `{room}/`" in text
        for path in paths:
            assert f"- `{path.name}`: " in text
    assert "(no docstring)" not in text.replace("`__init__.py`: (no docstring)", "")
