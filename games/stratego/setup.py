"""Setups and `from_board` positions: reading, checking, drawing at random, placing.

A setup is 40 piece codes, the seat's home ranks from its own back rank
forward, each rank from file a to j: Red's first ten codes are rank 1, Blue's
are rank 10, both written a to j. Separators (spaces, newlines, `/ , ; | - _ .`)
are ignored and letters may be lower case; the canonical form is the 40 codes
alone, upper case.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Sequence

from games.core import Illegal, Unreadable
from games.stratego.board import BLANK, CODES, COUNTS, LAKES, OWNER, cell

__all__ = [
    "GRAVON",
    "SETUP_SIZE",
    "home_cells",
    "parse_board",
    "place",
    "random_setup",
    "read_setup",
]

SETUP_SIZE = 40
_SEPARATORS = frozenset(" \t\r\n/,;|-_.:")
GRAVON = "BCDEFGHIJKLM"
"""Gravon archive letters of Red's kinds, Bomb first; Blue's are the next twelve (N..Y)."""
# Gravon lists Bomb, Spy, Scout, ..., Marshal, Flag: kind numbers in that order.
_GRAVON_KINDS = (11, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0)


def read_setup(text: object) -> str:
    """The canonical 40-code setup in `text`; raise Unreadable or Illegal saying what is wrong.

    A list of strings (ranks, say) is read as their concatenation.
    """
    if isinstance(text, Sequence) and not isinstance(text, str):
        if not all(isinstance(part, str) for part in text):
            raise Unreadable(f"a setup is text of 40 piece codes, got a list holding {text!r}.")
        text = "".join(text)
    if not isinstance(text, str):
        raise Unreadable(f"a setup is text of 40 piece codes, got {type(text).__name__}.")
    codes = "".join(ch for ch in text.upper() if ch not in _SEPARATORS)
    strange = sorted({ch for ch in codes if ch not in COUNTS})
    if strange:
        raise Unreadable(
            f"setup {text!r} holds characters that are not piece codes: {' '.join(strange)} "
            f"(codes: {' '.join(COUNTS)}; separators are ignored)."
        )
    _check_counts(codes)
    return codes


def _check_counts(codes: str) -> None:
    have = Counter(codes)
    off = [
        f"{have[code]} {code} (needs {need})" for code, need in COUNTS.items() if have[code] != need
    ]
    if off:
        raise Illegal(
            f"a setup needs exactly 40 pieces, {' '.join(f'{n} {c}' for c, n in COUNTS.items())}; "
            f"this one has {len(codes)} with {', '.join(off)}."
        )


def home_cells(seat: int) -> tuple[int, ...]:
    """The 40 cells a setup of `seat` fills, in setup order (own back rank first, a to j)."""
    ranks = range(4) if seat == 0 else range(9, 5, -1)
    return tuple(cell(f, r) for r in ranks for f in range(10))


def place(board: list[int], setup: str, seat: int) -> None:
    """Put the canonical `setup` of `seat` on `board` (a mutable mailbox)."""
    for sq, code in zip(home_cells(seat), setup, strict=True):
        board[sq] = CODES.index(code) + 1 | seat * OWNER


def random_setup(seed: int | str, seat: int, game: int = 1) -> str:
    """The seeded random setup of `seat`, as a canonical setup string.

    The flag goes on a random file of the back rank and bombs on its
    neighbours in the home area (two or three, as fit); the other pieces are
    shuffled over the rest. The draw depends only on `seed`, `game` and `seat`.
    """
    digest = hashlib.sha256(f"stratego-setup:{seed}:{game}:{seat}".encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    slots: list[str] = [""] * SETUP_SIZE
    flag = rng.randrange(10)
    slots[flag] = "F"
    beside = [f for f in (flag - 1, flag + 1) if 0 <= f < 10] + [10 + flag]
    for index in beside:
        slots[index] = "B"
    rest = [code for code, n in COUNTS.items() for _ in range(n)]
    rest.remove("F")
    for _ in beside:
        rest.remove("B")
    rng.shuffle(rest)
    free = iter(rest)
    return "".join(code or next(free) for code in slots)


def parse_board(board: str) -> tuple[int, ...]:
    """The mailbox of a 100-letter Gravon board (rank 1 first, files a to j; whitespace ignored)."""
    letters = "".join(board.split())
    if len(letters) != 100:
        raise ValueError(f"a board is 100 letters, rank 1 first; got {len(letters)}")
    cells = list(BLANK)
    for index, letter in enumerate(letters):
        sq = cell(index % 10, index // 10)
        if (letter == "_") != (sq in LAKES):
            raise ValueError(
                f"letter {index + 1} ({letter!r}) must be '_' exactly on the lakes "
                "c5 d5 c6 d6 g5 h5 g6 h6"
            )
        if letter in "A_":
            continue
        at = ord(letter) - ord("B")
        if not 0 <= at < 24:
            raise ValueError(f"letter {index + 1} ({letter!r}) is not a Gravon letter A-Y or _")
        cells[sq] = _GRAVON_KINDS[at % 12] + 1 | (at // 12) * OWNER
    return tuple(cells)
