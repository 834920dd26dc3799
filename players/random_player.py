"""Random: any legal move, drawn from the arena's seeded generator.

Plays every game program seats play. Randomness comes only from `ctx.rng`
(the arena seeds it), so two runs on the same seed play the same game.
"""


def create(ctx):
    """Called once per game, before the first move."""
    return RandomPlayer(ctx)


class RandomPlayer:
    def __init__(self, ctx):
        self.ctx = ctx

    def choose_move(self, view):
        """A uniformly random legal move."""
        return self.ctx.rng.choice(view["legal_moves"])

    def choose_setup(self, view):
        """Stratego: the 40 pieces of `setup_counts` in random order."""
        pieces = [
            code for code, count in sorted(view["setup_counts"].items()) for _ in range(count)
        ]
        self.ctx.rng.shuffle(pieces)
        return "".join(pieces)
