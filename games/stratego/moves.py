"""Move generation and the effect of one move: the hot loop of every Stratego game.

Per ply the work is incremental: the generator walks only the mover's movable
pieces along precomputed steps and rays, the anti-chase laws look only at the
moves they could refuse (the streak piece's; the chaser's quiet moves), and
the Zobrist key, the movable lists and the laws' memories are updated from
the move, never recomputed. A move is the code `from << 8 | to`; cells number
squares in (file, rank) order, so sorting codes gives the legal order.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Sequence

from games.stratego.board import (
    BATTLE,
    BLANK,
    BOMB,
    BOUNDARIES,
    EMPTY,
    FLAG,
    MOVED,
    OWNER,
    PIECE,
    REVEALED,
    SCOUT,
    SQUARES,
    STEPS,
    STRIDE,
    ZOBRIST,
)
from games.stratego.chase import NO_STREAK, Chase, Streak, chase_refuses, next_chase, threatened
from games.stratego.state import Battle, StrategoState

__all__ = [
    "NO_BATTLE_LIMIT",
    "PLY_CAP",
    "legal_for",
    "placement",
    "play",
    "pseudo_moves",
    "start_play",
]

NO_BATTLE_LIMIT = 100
PLY_CAP = 4000
_SCOUT_BITS = SCOUT + 1
_IMMOBILE = (FLAG + 1, BOMB + 1)


def _targets(seat: int) -> tuple[bool, ...]:
    own = seat * OWNER
    return tuple(v == EMPTY or v & OWNER != own for v in range((MOVED | REVEALED | PIECE) + 1))


# _OPEN[seat][cell value]: whether a piece of `seat` may move there (empty or enemy).
_OPEN: tuple[tuple[bool, ...], tuple[bool, ...]] = (_targets(0), _targets(1))


def _rays(a: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    rays = []
    for step in STEPS:
        ray, b = [], a + step
        while BLANK[b] == EMPTY:
            ray.append((b, a << 8 | b))
            b += step
        rays.append(tuple(ray))
    return tuple(rays)


# Per square, per direction, the (target, move code) pairs nearest first, stopping at the
# border or a lake; _STEP_TO holds the first pair of each ray, what a non-Scout can reach.
_RAYS: dict[int, tuple[tuple[tuple[int, int], ...], ...]] = {a: _rays(a) for a in SQUARES}
_STEP_TO: dict[int, tuple[tuple[int, int], ...]] = {
    a: tuple(ray[0] for ray in rays if ray) for a, rays in _RAYS.items()
}


def pseudo_moves(board: tuple[int, ...], squares: tuple[int, ...], seat: int) -> list[int]:
    """The moves of `seat`'s pieces on `squares` before the anti-chase laws, sorted."""
    open_ = _OPEN[seat]
    step_to = _STEP_TO
    out = [
        m for a in squares if board[a] & 15 != _SCOUT_BITS for b, m in step_to[a] if open_[board[b]]
    ]
    for a in squares:
        if board[a] & 15 == _SCOUT_BITS:
            for ray in _RAYS[a]:
                for b, m in ray:
                    t = board[b]
                    if t == EMPTY:
                        out.append(m)
                        continue
                    if open_[t]:
                        out.append(m)
                    break
    out.sort()
    return out


def legal_for(
    board: tuple[int, ...],
    squares: tuple[int, ...],
    seat: int,
    streak: Streak,
    chase: Chase | None,
    key: int,
) -> tuple[int, ...]:
    """`seat`'s legal moves: the pseudo moves that neither anti-chase law refuses."""
    moves = pseudo_moves(board, squares, seat)
    closed = streak.closed()
    if closed:
        start = streak.square
        moves = [m for m in moves if m >> 8 != start or not BOUNDARIES[m] & closed]
    if chase is not None and chase.chaser == seat:
        moves = [m for m in moves if not _chase_forbids(board, m, seat, streak, chase, key)]
    return tuple(moves)


def _chase_forbids(
    board: tuple[int, ...], m: int, seat: int, streak: Streak, chase: Chase, key: int
) -> bool:
    a, b = m >> 8, m & 255
    if board[b] != EMPTY:
        return False  # an attack is never a threat
    piece = board[a] & PIECE
    after = key ^ ZOBRIST[piece][a] ^ ZOBRIST[piece][b]
    return chase_refuses(chase, seat, board, a, b, after, streak)


def placement(board: Sequence[int]) -> tuple[int, tuple[tuple[int, ...], tuple[int, ...]]]:
    """The Zobrist key of a board's placement, and each seat's squares holding a piece that
    can move (sorted, so in legal-move order), worked out from scratch."""
    key = 0
    movable: tuple[list[int], list[int]] = ([], [])
    for sq in SQUARES:
        v = board[sq]
        if v > 0:
            key ^= ZOBRIST[v & PIECE][sq]
            if v & 15 not in _IMMOBILE:
                movable[v >> 4 & 1].append(sq)
    return key, (tuple(movable[0]), tuple(movable[1]))


def start_play(seed: int | str, game: int, board: tuple[int, ...], mover: int) -> StrategoState:
    """The play-phase state with pieces on `board`, no history, `mover` to move."""
    key, squares = placement(board)
    legal = legal_for(board, squares[mover], mover, NO_STREAK, None, key)
    return StrategoState(
        seed=seed,
        game=game,
        phase="play",
        board=board,
        mover=mover,
        ply=0,
        quiet=0,
        key=key,
        movable=squares,
        streaks=(NO_STREAK, NO_STREAK),
        chase=None,
        chase_overflow=0,
        battles=(),
        last_move=-1,
        flag_taken_by=None,
        legal=legal,
    )


def _shifted(squares: tuple[int, ...], gone: int, arrived: int | None) -> tuple[int, ...]:
    out = list(squares)
    del out[bisect_left(out, gone)]
    if arrived is not None:
        insort(out, arrived)
    return tuple(out)


def play(s: StrategoState, m: int) -> StrategoState:
    """The state after the mover plays the legal move code `m`."""
    a, b = m >> 8, m & 255
    seat = s.mover
    board = list(s.board)
    movable = [s.movable[0], s.movable[1]]
    v = board[a] | MOVED
    if v & 15 == _SCOUT_BITS and abs(b - a) not in (1, STRIDE):
        v |= REVEALED  # a Scout that moves more than one square shows what it is
    board[a] = EMPTY
    key = s.key ^ ZOBRIST[v & PIECE][a]
    if board[b] == EMPTY:
        board[b] = v
        key ^= ZOBRIST[v & PIECE][b]
        movable[seat] = _shifted(movable[seat], a, b)
        chase, dropped = next_chase(s.chase, seat, a, b, threatened(board, b, seat), key)
        return _after(s, board, m, key, movable, True, (chase, dropped), None, s.quiet + 1)
    attacker, defender = (v & 15) - 1, (board[b] & 15) - 1
    fought = Battle(s.ply + 1, seat, a, b, attacker, defender, BATTLE[attacker][defender])
    key = _fight(board, movable, fought, v, key)
    return _after(s, board, m, key, movable, fought.winner == 1, (None, 0), fought, 0)


def _fight(
    board: list[int], movable: list[tuple[int, ...]], fought: Battle, v: int, key: int
) -> int:
    """Resolve `fought` on `board` and `movable` in place; return the placement key after it.

    `v` is the attacker as it stands after moving (already lifted off its square).
    """
    a, b, seat = fought.start, fought.target, fought.seat
    t = board[b]
    key ^= ZOBRIST[t & PIECE][b]
    board[b] = EMPTY
    if fought.winner == 1:
        board[b] = v | REVEALED
        key ^= ZOBRIST[v & PIECE][b]
    elif fought.winner == -1:
        board[b] = t | REVEALED
        key ^= ZOBRIST[t & PIECE][b]
    movable[seat] = _shifted(movable[seat], a, b if fought.winner == 1 else None)
    if fought.winner >= 0 and t & 15 not in _IMMOBILE:
        movable[1 - seat] = _shifted(movable[1 - seat], b, None)
    return key


def _after(
    s: StrategoState,
    board: list[int],
    m: int,
    key: int,
    movable: list[tuple[int, ...]],
    survived: bool,
    chase: tuple[Chase | None, int],
    fought: Battle | None,
    quiet: int,
) -> StrategoState:
    """The state after the mover's move `m`: the laws' memories, the ends, the next legal list."""
    seat, other = s.mover, 1 - s.mover
    streak = s.streaks[seat].after(m >> 8, m & 255, BOUNDARIES[m], survived)
    streaks = (streak, s.streaks[1]) if seat == 0 else (s.streaks[0], streak)
    battles = s.battles if fought is None else (*s.battles, fought)
    flag_taken_by = seat if fought is not None and fought.defender == FLAG else None
    ply, cells, squares = s.ply + 1, tuple(board), (movable[0], movable[1])
    over = flag_taken_by is not None or quiet >= NO_BATTLE_LIMIT or ply >= PLY_CAP
    legal = () if over else legal_for(cells, squares[other], other, streaks[other], chase[0], key)
    return StrategoState(
        seed=s.seed,
        game=s.game,
        phase="play",
        board=cells,
        mover=other,
        ply=ply,
        quiet=quiet,
        key=key,
        movable=squares,
        streaks=streaks,
        chase=chase[0],
        chase_overflow=s.chase_overflow + chase[1],
        battles=battles,
        last_move=m,
        flag_taken_by=flag_taken_by,
        legal=legal,
    )
