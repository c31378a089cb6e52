"""HTML → the text a reader sees (inscriptis: tables and lists laid out as text), for an HTML
mail body and an attached HTML file."""

from __future__ import annotations

import logging
import re

log = logging.getLogger(__name__)


def html_to_text(html: str) -> str:
    from inscriptis import get_text

    try:
        text = get_text(html)
    except Exception as exc:  # noqa: BLE001 - broken markup: keep the words at least
        log.info("HTML unreadable (%s: %s); its tags are stripped", type(exc).__name__, exc)
        text = re.sub(r"<[^>]+>", " ", html)
    # inscriptis pads table cells to align columns: padding is prompt tokens that say nothing
    lines = (re.sub(r"[ \t]{2,}", "  ", line).strip() for line in text.splitlines())
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
