"""`python -m tests.golden`: play the golden configs again and rewrite their digests."""

from tests.golden import regenerate

regenerate()
