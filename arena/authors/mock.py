"""What the mock answers a program brief with: a program, sound or, as a fault says, not.

Sound programs are small players of every game programs play: the move after
which the standing favours the seat most, the opponent's standing weighed by
`WEIGHT`, with `LOOKAHEAD` a look at the opponent's best reply where the
budget allows, and a pinch of `ctx.rng` noise. The three settings are drawn
from the mock's generator, so two mock authors write different programs. The
faulty ones are what a model gets wrong when it writes code:

- `no_code`: prose, no code block;
- `syntax`: a program that does not parse;
- `forbidden`: a program that imports `os`;
- `nondeterministic`: a program whose move is drawn from `id(object())` (other
  bits of the address each move), which the check's two runs on one seed refuse;
- `slow`: a program that thinks past the move's timeout.

Both mocks use it: the server (`arena.mock_llm`) for a request whose prompt
opens with `PROGRAM FOR: <game>`, and a `kind = "mock"` policy's author.
"""

from __future__ import annotations

import random
import re

__all__ = ["PROGRAM_FAULTS", "program_game", "program_reply"]

PROGRAM_FAULTS = ("no_code", "syntax", "forbidden", "nondeterministic", "slow")
"""What a faulty program reply gets wrong."""

_GAME = re.compile(r"^PROGRAM FOR:[ \t]*([a-z-]+)[ \t]*$", re.MULTILINE)

_SETUP = "FB33B245B3B2456B72486X7S9B87632524263252"

_PLAYER = '''"""A one-ply player with a look at the reply: standing for us, less WEIGHT times theirs."""

SETUP = "{setup}"
WEIGHT = {weight}
LOOKAHEAD = {lookahead}
NOISE = {noise}


def create(ctx):
    return Player(ctx)


class Player:
    def __init__(self, ctx):
        self.ctx = ctx

    def choose_setup(self, view):
        return SETUP

    def value(self, states):
        ctx = self.ctx
        ours = ctx.standing_many(states, ctx.seat)
        theirs = ctx.standing_many(states, 1 - ctx.seat)
        return [a - WEIGHT * b for a, b in zip(ours, theirs)]

    def choose_move(self, view):
        legal = view["legal_moves"]
        if len(legal) == 1:
            return legal[0]
        ctx = self.ctx
        budget = view["node_budget_left"] * 3 // 4
        moves = legal[: max(1, budget // 4)]
        after = ctx.apply_many(view["state"], moves)
        values = self.value(after)
        spent = 3 * len(moves)
        if LOOKAHEAD:
            for i, state in enumerate(after):
                if ctx.outcome(state) is not None:
                    spent += 1
                    continue
                try:
                    replies = ctx.legal_moves(state)
                except ctx.HelperError:
                    break  # a position whose next step is chance: one ply it is
                spent += 2
                if not replies or spent + 3 * len(replies) > budget:
                    continue
                worst = min(self.value(ctx.apply_many(state, replies)))
                spent += 3 * len(replies)
                values[i] = (values[i] + worst) / 2
        if NOISE and ctx.rng.random() < NOISE:
            return ctx.rng.choice(moves)
        best = max(range(len(moves)), key=lambda i: (values[i], -i))
        return moves[best]
'''

_NONDETERMINISTIC = """def create(ctx):
    return Player()


class Player:
    def __init__(self):
        self.turn = 0

    def choose_setup(self, view):
        return "{setup}"

    def choose_move(self, view):
        legal = view["legal_moves"]
        self.turn += 1
        # An object's id is its address, and an address's high bits are drawn afresh by
        # each process (address space layout randomisation): mixed with the turn, they
        # make two runs of one seed play alike only by rare chance.
        mixed = ((id(object()) >> 12) * 0x9E3779B1 + self.turn * 0x85EBCA6B) % (1 << 64)
        mixed = ((mixed ^ (mixed >> 29)) * 0xC2B2AE35) % (1 << 64)
        return legal[(mixed >> 32) % len(legal)]
"""

_SLOW = """def create(ctx):
    return Player()


class Player:
    def choose_setup(self, view):
        return "{setup}"

    def choose_move(self, view):
        total = 0
        while total >= 0:  # thinks for ever: the move's timeout ends it
            total += 1
        return view["legal_moves"][0]
"""


def program_game(prompt: str) -> str | None:
    """The game a program brief asks a program for, or None if `prompt` is no brief."""
    found = _GAME.search(prompt)
    return found.group(1) if found else None


def program_reply(rng: random.Random, fault: str | None = None) -> str:
    """A reply to a program brief: one fenced program, or what `fault` makes of it."""
    if fault == "no_code":
        return "I would write a careful search with a strong evaluation, pruning what is weak."
    if fault == "nondeterministic":
        return _fenced(_NONDETERMINISTIC.format(setup=_SETUP))
    if fault == "slow":
        return _fenced(_SLOW.format(setup=_SETUP))
    program = _PLAYER.format(
        setup=_SETUP,
        weight=rng.choice((0.5, 0.75, 1.0, 1.25)),
        lookahead=rng.choice((0, 1)),
        noise=rng.choice((0.0, 0.05, 0.1)),
    )
    if fault == "syntax":
        program = program.replace("def choose_move(self, view):", "def choose_move(self, view)")
    elif fault == "forbidden":
        program = "import os\n\n" + program
    return "Here is my program.\n\n" + _fenced(program)


def _fenced(program: str) -> str:
    return f"```python\n{program}```\n"
