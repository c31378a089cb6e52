"""`python -m assistant.cli ...`: the same as the `assistant` console script."""

import sys

from assistant.cli.cli import main

sys.exit(main())
