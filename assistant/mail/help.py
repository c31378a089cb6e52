"""`assistant help search`: the query terms' page, docs/search.md (shipped with the app)."""

from __future__ import annotations

from assistant.home import bundled


def page(topic: str) -> str:
    """The help page for `topic` ("search")."""
    return (bundled("docs") / f"{topic}.md").read_text(encoding="utf-8")
