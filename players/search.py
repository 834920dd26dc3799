"""Search: alpha-beta within the node budget; backgammon looks one roll ahead.

Board games and Stratego: iterative-deepening negamax with alpha-beta over
the arena's helpers, scoring leaves by our standing minus the opponent's, and
stopping at 80% of the node budget with the best move of the deepest finished
search. (In Stratego the helpers play on a sampled world: the opponent's
hidden ranks are a guess the arena deals, never the truth.)

Backgammon: every play scored one ply deep, then the best few re-scored by
the opponent's best reply averaged over the 21 rolls (`ctx.with_dice`: a
state made by `apply` has no roll yet, the program chooses one).
"""

SETUP = "FB33B245B3B2456B72486X7S9B87632524263252"
SHARE_OF_BUDGET = 0.8
MAX_DEPTH = 12
WIN = 1_000_000
CANDIDATES = 4
ROLLS = [((a, b), 1 if a == b else 2) for a in range(1, 7) for b in range(a, 7)]
"""The 21 rolls with their weight out of 36."""


def create(ctx):
    """Called once per game, before the first move."""
    if ctx.game == "backgammon":
        return Expecting(ctx)
    return AlphaBeta(ctx)


class OutOfNodes(Exception):
    """Our own share of the budget is spent (we stop before the arena stops us)."""


class Nodes:
    """The helpers, each call counted against our share of the move's budget."""

    def __init__(self, ctx, budget):
        self.ctx = ctx
        self.left = int(budget * SHARE_OF_BUDGET)

    def spend(self, count):
        if self.left < count:
            raise OutOfNodes
        self.left -= count

    def outcome(self, state):
        self.spend(1)
        return self.ctx.outcome(state)

    def legal(self, state):
        self.spend(1)
        return self.ctx.legal_moves(state)

    def apply(self, state, move):
        self.spend(1)
        return self.ctx.apply(state, move)

    def margin(self, state, seat):
        """Standing of `seat` minus the other seat's (two nodes)."""
        self.spend(2)
        return self.ctx.standing(state, seat) - self.ctx.standing(state, 1 - seat)

    def with_dice(self, state, d1, d2):
        self.spend(1)
        return self.ctx.with_dice(state, d1, d2)


class AlphaBeta:
    def __init__(self, ctx):
        self.ctx = ctx

    def choose_setup(self, view):
        return SETUP

    def choose_move(self, view):
        legal = view["legal_moves"]
        if len(legal) == 1:
            return legal[0]
        nodes = Nodes(self.ctx, view["node_budget_left"])
        best, order = legal[0], list(legal)
        try:
            for depth in range(1, MAX_DEPTH + 1):
                best, order = self.root(nodes, view["state"], order, depth)
        except OutOfNodes:
            pass  # keep the best move of the deepest search that finished
        return best

    def root(self, nodes, state, order, depth):
        """The best move at `depth`, and every move ordered best first for the next depth."""
        me = self.ctx.seat
        alpha = -2 * WIN
        scored = []
        for index, move in enumerate(order):
            value = -self.negamax(
                nodes, nodes.apply(state, move), 1 - me, depth - 1, -2 * WIN, -alpha
            )
            scored.append((-value, index, move))
            alpha = max(alpha, value)
        scored.sort()
        return scored[0][2], [move for _, _, move in scored]

    def negamax(self, nodes, state, mover, depth, alpha, beta):
        """The value of `state` for `mover`, the seat to move there."""
        outcome = nodes.outcome(state)
        if outcome is not None:
            scores = outcome["scores"]
            return 0 if scores is None else scores[mover] * (WIN + depth)
        if depth == 0:
            return nodes.margin(state, mover)
        best = -2 * WIN
        for move in nodes.legal(state):
            value = -self.negamax(
                nodes, nodes.apply(state, move), 1 - mover, depth - 1, -beta, -alpha
            )
            best = max(best, value)
            alpha = max(alpha, value)
            if alpha >= beta:
                break
        return best


class Expecting:
    def __init__(self, ctx):
        self.ctx = ctx

    def choose_move(self, view):
        legal = view["legal_moves"]
        if len(legal) == 1:
            return legal[0]
        nodes = Nodes(self.ctx, view["node_budget_left"])
        me = self.ctx.seat
        shallow = []
        try:
            for index, move in enumerate(legal):
                after = nodes.apply(view["state"], move)
                shallow.append((-nodes.margin(after, me), index, move, after))
        except OutOfNodes:
            if not shallow:
                return legal[0]
        shallow.sort()
        deep = []
        try:
            for value, index, move, after in shallow[:CANDIDATES]:
                deep.append((-self.expected(nodes, after, me, -value), index, move))
        except OutOfNodes:
            pass  # compare only the candidates whose every roll was looked at
        return min(deep)[2] if deep else shallow[0][2]

    def expected(self, nodes, after, me, value_now):
        """Our margin after the opponent's best reply, averaged over its 21 rolls."""
        total = 0
        for (d1, d2), weight in ROLLS:
            rolled = nodes.with_dice(after, d1, d2)
            worst = None
            for reply in nodes.legal(rolled):
                margin = nodes.margin(nodes.apply(rolled, reply), me)
                worst = margin if worst is None else min(worst, margin)
            total += weight * (value_now if worst is None else worst)
        return total / 36
