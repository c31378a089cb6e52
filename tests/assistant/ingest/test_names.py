"""People's names from address headers, and from the X- headers of Exchange/Notes exports."""

from __future__ import annotations

import pytest

from assistant.ingest.names import names


@pytest.mark.parametrize(
    ("header", "export", "expected"),
    [
        (
            'Jeff Skilling <jeff@x.com>, "Murphy, Suzanne" <s@u.com>',
            "",
            "Jeff Skilling; Suzanne Murphy",
        ),
        ("sherri.sera@enron.com", "Sherri Sera", "Sherri Sera"),
        (
            "s@enron.com",
            "Strong, Stephanie </O=ENRON/OU=NA/CN=RECIPIENTS/CN=SSTRONG>",
            "Stephanie Strong",
        ),
        (
            "d@k.com",
            "Dottie Kerr <dottie@kerr-solutions.com>@ENRON <IMCEANOTES-Dottie+20Kerr@ENRON.com>",
            "Dottie Kerr",
        ),
        ("p@w.org", '"Klaus Schwab" <president@weforum.org>@ENRON', "Klaus Schwab"),
        (
            "n@e.com",
            "Enron Change Management Announcement@ENRON",
            "Enron Change Management Announcement",
        ),
        ("a@b, c@d", "Federico Cerisoli, David Crews", "Federico Cerisoli; David Crews"),
        ("t@aol.com", "TOMSKILLJR@aol.com@ENRON <IMCEANOTES-TOMSKILLJR+40aol@ENRON.com>", ""),
        ("", "", ""),
    ],
)
def test_names(header, export, expected):
    assert names(header, export) == expected
