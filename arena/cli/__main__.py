"""`python -m arena.cli ...`: the `arena` command, as the entry point `arena` runs it."""

from __future__ import annotations

import sys

from arena.cli import main

__all__: list[str] = []

if __name__ == "__main__":
    sys.exit(main())
