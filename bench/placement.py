"""Placement: how often a newcomer's placement matches rank it within one place of its true rank.

    python -m bench.placement [--sims 5000] [--entrants 6] [--established 12]
                              [--draw-rate 0.1] [--seed 1]

A simulated pool, no games played: `--entrants` established entrants evenly spaced
`gap` Elo apart, every pair of them `--established` matches already played; a
newcomer whose true strength is uniform over the span from half a gap below the
weakest to half a gap above the strongest (so every true rank is equally likely)
plays `placement_matches` matches against each of them. A match is two independent
games, drawn with probability `--draw-rate` (less where one side's expected score
leaves no room), else won or lost so that the expected score is logistic in the Elo
difference. The pool is then fitted with the product's own Bradley-Terry fit (the
Newton of `arena.results.strengths`, the prior included, all simulations at once);
the newcomer is placed within one rank when its rank among all the entrants by
fitted rating is at most one away from its rank by true strength. The table gives
that share for each gap and number of placement matches, and the fewest placement
matches (per entrant) that reach 90%.
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np
import numpy.typing as npt
from rich.console import Console
from rich.table import Table

from arena.results.strengths import ELO_PER_LOG_STRENGTH, fit_log_strengths, with_anchor_prior

GAPS = (20, 40, 80, 160)
PLACEMENTS = (1, 2, 4, 6, 8, 12, 16, 24)
DEFAULT_PLACEMENT = 4
"""`placement_matches` when a pool's config leaves it out."""
TARGET = 0.9

_FloatArray = npt.NDArray[np.float64]


def _points(
    rng: np.random.Generator, elo_diff: _FloatArray, matches: int, draw_rate: float
) -> _FloatArray:
    """The first side's points over `matches` matches of two games, per simulation, where
    the first side is `elo_diff` Elo stronger (shape (sims,))."""
    score = 1.0 / (1.0 + 10.0 ** (-elo_diff / 400.0))
    draw = np.minimum(draw_rate, 2 * np.minimum(score, 1 - score))
    u = rng.random((len(elo_diff), 2 * matches))
    win, no_loss = (score - draw / 2)[:, None], (score + draw / 2)[:, None]
    points: _FloatArray = np.where(u < win, 1.0, np.where(u < no_loss, 0.5, 0.0)).sum(axis=1)
    return points


def placed_share(
    rng: np.random.Generator, args: argparse.Namespace, gap: float, placement: int
) -> float:
    """The share of `args.sims` simulated pools whose newcomer is placed within one rank."""
    sims, entrants = args.sims, args.entrants
    strengths = np.tile(gap * np.arange(entrants, dtype=float), (sims, 1))
    newcomer = rng.uniform(-gap / 2, gap * (entrants - 0.5), sims)
    everyone = np.column_stack([strengths, newcomer])  # the newcomer last
    n = entrants + 2  # entrants, the newcomer, the anchor
    wins = np.zeros((sims, n, n))
    pairs = itertools.combinations(range(entrants), 2)
    played = [(i, j, args.established) for i, j in pairs]
    played += [(entrants, j, placement) for j in range(entrants)]
    for i, j, matches in played:
        points = _points(rng, everyone[:, i] - everyone[:, j], matches, args.draw_rate)
        wins[:, i, j] += points
        wins[:, j, i] += 2 * matches - points
    fitted = fit_log_strengths(with_anchor_prior(wins))
    true_rank = (everyone > everyone[:, -1:]).sum(axis=1)
    fitted_rank = (fitted > fitted[:, -1:]).sum(axis=1)
    return float(np.mean(np.abs(fitted_rank - true_rank) <= 1))


def main() -> None:
    """Print the share placed within one rank per gap and placement, and what reaches 90%."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sims", type=int, default=5000, help="simulated pools per cell")
    parser.add_argument("--entrants", type=int, default=6, help="established entrants")
    parser.add_argument("--established", type=int, default=12, help="matches per pair of them")
    parser.add_argument("--draw-rate", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    console = Console(width=max(Console().width, 100))
    table = Table(
        title=f"Newcomer placed within one rank, {args.entrants} established entrants "
        f"({args.established} matches a pair), {args.sims} pools a cell"
    )
    table.add_column("gap (Elo)", justify="right")
    for placement in PLACEMENTS:
        mark = " *" if placement == DEFAULT_PLACEMENT else ""
        table.add_column(f"{placement}{mark}", justify="right")
    table.add_column(f"reaches {TARGET:.0%}", justify="right")
    for gap in GAPS:
        shares = [placed_share(rng, args, gap, placement) for placement in PLACEMENTS]
        reaching = next((p for p, s in zip(PLACEMENTS, shares, strict=True) if s >= TARGET), None)
        table.add_row(
            f"{gap}", *(f"{s:.0%}" for s in shares),
            f"more than {PLACEMENTS[-1]}" if reaching is None else f"{reaching}",
        )  # fmt: skip
    console.print(table)
    console.print(
        f"columns: placement matches against each entrant (* the default, {DEFAULT_PLACEMENT}); "
        f"{ELO_PER_LOG_STRENGTH:.1f} Elo per log-strength unit; draws {args.draw_rate:.0%}"
    )


if __name__ == "__main__":
    main()
