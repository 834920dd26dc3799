"""Greedy: the move after which the arena's standing favours us most (one ply).

Plays every game program seats play. For each legal move it asks the arena
for the state after it (one node) and scores it with the standing of both
seats (two nodes): our standing minus theirs. It asks in three batched calls
(`ctx.apply_many`, then `ctx.standing_many` once per seat): the same nodes as
one call each, one trip over the pipe per batch. Ties go to the earlier move
in the legal list, so it is deterministic.
"""

# Stratego: own back rank first, each rank from file a to j. The flag sits in
# a back corner behind bombs; the strong pieces stand in the third rank.
SETUP = "FB33B245B3B2456B72486X7S9B87632524263252"
NODES_PER_MOVE = 3


def create(ctx):
    """Called once per game, before the first move."""
    return Greedy(ctx)


class Greedy:
    def __init__(self, ctx):
        self.ctx = ctx

    def choose_setup(self, view):
        return SETUP

    def choose_move(self, view):
        legal = view["legal_moves"]
        if len(legal) == 1:
            return legal[0]
        ctx = self.ctx
        me, them = ctx.seat, 1 - ctx.seat
        # Never ask for more nodes than the budget holds: over budget, the arena
        # plays the first legal move for us and counts it against us.
        affordable = legal[: view["node_budget_left"] // NODES_PER_MOVE]
        if not affordable:
            return legal[0]
        after = ctx.apply_many(view["state"], affordable)
        ours, theirs = ctx.standing_many(after, me), ctx.standing_many(after, them)
        best, best_value = legal[0], None
        for move, mine, other in zip(affordable, ours, theirs, strict=True):
            value = mine - other
            if best_value is None or value > best_value:
                best, best_value = move, value
        return best
