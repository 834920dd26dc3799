"""Match efficiency: how many matches a sequential test needs against a fixed-size one.

    python -m bench.efficiency [--tests 2000] [--draw-rate 0.2] [--seed 1]

Simulated policies of known strength, no games played. The first policy is `elo`
logistic Elo stronger; each game of a match is independent, drawn with probability
`--draw-rate`, else won or lost so that the expected score is `L(elo) = 1 / (1 +
10**(-elo / 400))` (win `L - d/2`, loss `1 - L - d/2`); a match's pair outcome is the
sum of its two games. Independent games are the pentanomial model's worst case: a
seat advantage that swapped seats cancel would only lower the per-match variance.

SPRT section: `arena.league.sprt`'s test with elo0 = 0, elo1 = 20, alpha = beta = 0.05
and a match cap far above any test's length, run `--tests` times with the true Elo at
elo0 (the share accepting H1 is the type I error) and at elo1 (the share accepting H0
is the type II error). The LLR after every match comes from `llr_many`, vectorised
over the simulated tests; a few runs are replayed through `SequentialTest` itself to
show the two agree. The fixed-size comparison is the one-sided z-test on the mean pair
score at the same alpha and beta: N = ((z_alpha sigma0 + z_beta sigma1) / (mu1 - mu0))^2,
mu and sigma the per-match mean and standard deviation of the per-game score under each
hypothesis (the model's exact values); its error rates at that N are then measured by
simulation too. The target: the fixed N is at least 1.8x the SPRT's mean length at
whichever hypothesis the SPRT needs longer.
"""

from __future__ import annotations

import argparse
import itertools
import math
import multiprocessing
import os
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import numpy.typing as npt
from rich.console import Console
from rich.table import Table

from arena.league.adaptive import pick_round_from_view, round_view
from arena.league.sprt import OUTCOMES, SequentialTest, bounds, expected_score, llr_many
from arena.results.ratings import MatchOutcome, _fit_log_strengths, _with_anchor_prior

ELO0, ELO1, ALPHA, BETA = 0.0, 20.0, 0.05, 0.05
MAX_ERROR = 0.065
"""Each error rate's target: the nominal 5% plus 1.5 points of simulation noise and
GSPRT approximation."""
MIN_RATIO = 1.8
BLOCK = 128
"""Matches simulated per test per step: the LLR is computed for a block at a time."""

_IntArray = npt.NDArray[np.int64]
_FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Target:
    """One figure checked against its target."""

    figure: str
    value: str
    target: str
    met: bool


Section = Callable[[argparse.Namespace], list[Target]]
"""A section prints its own table and hands back its targets."""


def pentanomial(elo: float, draw_rate: float) -> _FloatArray:
    """P(0, 0.5, 1, 1.5, 2 points) of a match of two independent games."""
    score = expected_score(elo)
    win, loss = score - draw_rate / 2, 1 - score - draw_rate / 2
    if min(win, loss) < 0:
        raise ValueError(f"a draw rate of {draw_rate} leaves no room for an Elo of {elo}")
    game = np.array([loss, draw_rate, win])
    return np.convolve(game, game)


def _moments(pdf: _FloatArray) -> tuple[float, float]:
    """Mean and standard deviation of the per-game score of one match."""
    a = np.array(OUTCOMES) / 2
    mean = float(pdf @ a)
    return mean, math.sqrt(float(pdf @ (a - mean) ** 2))


def first_crossings(
    outcomes: _IntArray, start: _FloatArray, lower: float, upper: float
) -> tuple[_IntArray, _IntArray, _FloatArray]:
    """For each test (row of `outcomes`, pentanomial indices, starting from counts `start`):
    the verdict (+1 H1, -1 H0, 0 none in this block), the matches of the block it took
    (the whole block without a verdict) and the counts after them."""
    path = start[:, None, :] + np.cumsum(np.eye(5)[outcomes], axis=1)
    value = llr_many(path, ELO0, ELO1)
    crossed = (value >= upper) | (value <= lower)
    decided = crossed.any(axis=1)
    at = np.where(decided, crossed.argmax(axis=1), outcomes.shape[1] - 1)
    rows = np.arange(outcomes.shape[0])
    verdict = np.where(decided, np.where(value[rows, at] >= upper, 1, -1), 0)
    return verdict, at + 1, path[rows, at]


def run_sprts(pdf: _FloatArray, tests: int, cap: int, rng: np.random.Generator) -> _IntArray:
    """`tests` SPRTs on matches drawn from `pdf`: each one's signed length (+n accepted H1
    after n matches, -n H0, 0 capped)."""
    lower, upper = bounds(ALPHA, BETA)
    result = np.zeros(tests, dtype=np.int64)
    active = np.arange(tests)
    counts = np.zeros((tests, 5))
    played = 0
    while active.size and played < cap:
        block = min(BLOCK, cap - played)
        outcomes = rng.choice(5, size=(active.size, block), p=pdf)
        verdict, took, counts[active] = first_crossings(outcomes, counts[active], lower, upper)
        done = verdict != 0
        result[active[done]] = verdict[done] * (played + took[done])
        active = active[~done]
        played += block
    return result


def agreement(pdf: _FloatArray, runs: int, rng: np.random.Generator) -> tuple[int, int]:
    """(runs where `SequentialTest` gives the vectorised verdict and index, runs)."""
    lower, upper = bounds(ALPHA, BETA)
    settings = SimpleNamespace(elo0=ELO0, elo1=ELO1, alpha=ALPHA, beta=BETA, max_matches=10**6)
    same = 0
    for _ in range(runs):
        outcomes = rng.choice(5, size=(1, 4000), p=pdf)
        verdict, took, _ = first_crossings(outcomes, np.zeros((1, 5)), lower, upper)
        test = SequentialTest(settings)
        for i, slot in enumerate(outcomes[0]):
            test.add(i, OUTCOMES[slot])
            if test.stopped:
                break
        expected = {1: "H1", -1: "H0", 0: None}[int(verdict[0])]
        if test.verdict == expected and (expected is None or test.decided_at == took[0] - 1):
            same += 1
    return same, runs


def fixed_size(pdf0: _FloatArray, pdf1: _FloatArray) -> tuple[int, float]:
    """The z-test's matches for ALPHA and BETA, and its threshold on the mean per-game score."""
    (mu0, sigma0), (mu1, sigma1) = _moments(pdf0), _moments(pdf1)
    z_alpha = statistics.NormalDist().inv_cdf(1 - ALPHA)
    z_beta = statistics.NormalDist().inv_cdf(1 - BETA)
    n = math.ceil(((z_alpha * sigma0 + z_beta * sigma1) / (mu1 - mu0)) ** 2)
    return n, mu0 + z_alpha * sigma0 / math.sqrt(n)


def fixed_errors(
    n: int, threshold: float, pdf: _FloatArray, tests: int, rng: np.random.Generator
) -> float:
    """The share of `tests` fixed tests of `n` matches from `pdf` whose mean beats `threshold`."""
    counts = rng.multinomial(n, pdf, size=tests)
    return float(np.mean(counts @ (np.array(OUTCOMES) / 2) / n > threshold))


def sprt_section(args: argparse.Namespace) -> list[Target]:
    """Type I and II errors and mean length of the SPRT, against the fixed-size test."""
    rng = np.random.default_rng(args.seed)
    pdf0, pdf1 = pentanomial(ELO0, args.draw_rate), pentanomial(ELO1, args.draw_rate)
    began = time.perf_counter()
    at0 = run_sprts(pdf0, args.tests, args.max_matches, rng)
    at1 = run_sprts(pdf1, args.tests, args.max_matches, rng)
    type1, type2 = float(np.mean(at0 > 0)), float(np.mean(at1 < 0))
    mean0, mean1 = float(np.mean(np.abs(at0))), float(np.mean(np.abs(at1)))
    capped = int(np.sum(at0 == 0) + np.sum(at1 == 0))
    longest = int(max(np.abs(at0).max(), np.abs(at1).max()))
    same, checked = agreement(pdf1, args.check, rng)
    n, threshold = fixed_size(pdf0, pdf1)
    fixed1 = fixed_errors(n, threshold, pdf0, 100_000, rng)
    fixed2 = 1 - fixed_errors(n, threshold, pdf1, 100_000, rng)
    seconds = time.perf_counter() - began

    table = Table(
        title=f"SPRT elo0 = {ELO0:g}, elo1 = {ELO1:g}, alpha = beta = {ALPHA:g}: "
        f"{args.tests:,} tests per hypothesis, draw rate {args.draw_rate:g}"
    )
    for column in ("figure", "at elo0", "at elo1"):
        table.add_column(column, justify="left" if column == "figure" else "right")
    table.add_row("SPRT: share accepting the wrong hypothesis", f"{type1:.2%}", f"{type2:.2%}")
    table.add_row("SPRT: mean matches to a verdict", f"{mean0:,.0f}", f"{mean1:,.0f}")
    table.add_row(
        "SPRT: median / 95th percentile matches",
        f"{np.median(np.abs(at0)):,.0f} / {np.percentile(np.abs(at0), 95):,.0f}",
        f"{np.median(np.abs(at1)):,.0f} / {np.percentile(np.abs(at1), 95):,.0f}",
    )
    table.add_row(
        f"fixed z-test of {n:,} matches: error (simulated)", f"{fixed1:.2%}", f"{fixed2:.2%}"
    )
    table.add_row("fixed / SPRT mean matches", f"{n / mean0:.2f}x", f"{n / mean1:.2f}x")
    Console(width=110).print(table)
    Console().print(
        f"cap {args.max_matches:,} matches: {capped} tests reached it, the longest took "
        f"{longest:,}; SequentialTest agreed with the vectorised LLR on {same} of {checked} "
        f"replayed runs; {seconds:.1f} s",
        style="dim",
    )
    ratio = n / max(mean0, mean1)
    return [
        Target("SPRT type I error", f"{type1:.2%}", f"<= {MAX_ERROR:.1%}", type1 <= MAX_ERROR),
        Target("SPRT type II error", f"{type2:.2%}", f"<= {MAX_ERROR:.1%}", type2 <= MAX_ERROR),
        Target(
            "fixed / SPRT matches (worse hypothesis)", f"{ratio:.2f}x", f">= {MIN_RATIO}x",
            ratio >= MIN_RATIO,
        ),
        Target("max_matches never binding", f"{capped} capped", "0", capped == 0),
    ]  # fmt: skip


# ---------------------------------------------------------------------------
# Adaptive schedule

ADAPTIVE_ELOS = (0.0, 20.0, 60.0, 120.0, 200.0, 300.0, 420.0, 560.0)
EVEN_ELOS = tuple(30.0 * i for i in range(8))
TARGET = 0.90
"""The adaptive league's stopping probability, and the round robin's share of right rankings."""
MIN_ADAPTIVE_RATIO = 2.0
ROUND_MATCHES = 8
ADAPTIVE_RESAMPLES = 200
"""The bench's bootstrap per round: a fifth of the league's default 1000, for speed."""
PAIR_CAP = 100_000
MAX_PER_PAIR = 2000
"""The round robin's longest league, in matches per pair."""


def game_pdf(elo: float, draw_rate: float) -> _FloatArray:
    """P(loss, draw, win) of one game for the side `elo` stronger: the SPRT section's game,
    its draw rate lowered to 2 min(L, 1 - L) where `draw_rate` leaves no room for a loss."""
    score = expected_score(elo)
    draw = min(draw_rate, 2 * min(score, 1 - score))
    return np.array([1 - score - draw / 2, draw, score - draw / 2]).clip(0)


def _pair_pdfs(elos: tuple[float, ...], draw_rate: float) -> list[_FloatArray]:
    """Each pair's game distribution (first's view), pairs in `itertools.combinations` order."""
    return [game_pdf(b - a, draw_rate)[::-1] for a, b in itertools.combinations(elos, 2)]


def round_robin_needs(
    elos: tuple[float, ...], draw_rate: float, leagues: int, rng: np.random.Generator
) -> tuple[int, float]:
    """The fewest matches per pair whose round robin ranks every policy right in at least
    TARGET of `leagues` simulated leagues (the leagues grow a match per pair at a time), and
    that share. Point estimates only: the same fit as `bradley_terry`, all leagues at once."""
    n = len(elos) + 1
    pairs = list(itertools.combinations(range(len(elos)), 2))
    pdfs = _pair_pdfs(elos, draw_rate)
    wins = np.zeros((leagues, n, n))
    truth = np.argsort(-np.array(elos), kind="stable")
    for per_pair in range(1, MAX_PER_PAIR + 1):
        for (i, j), pdf in zip(pairs, pdfs, strict=True):
            points = rng.choice(3, size=(leagues, 2), p=pdf).sum(axis=1) / 2
            wins[:, i, j] += points
            wins[:, j, i] += 2 - points
        ratings = _fit_log_strengths(_with_anchor_prior(wins))
        share = float(np.mean(np.all(np.argsort(-ratings, axis=1) == truth, axis=1)))
        if share >= TARGET:
            return per_pair, share
    return MAX_PER_PAIR, share


def adaptive_league(elos: tuple[float, ...], draw_rate: float, seed: int) -> tuple[int, bool]:
    """One simulated adaptive league: rounds of ROUND_MATCHES picked from one bootstrap of
    ADAPTIVE_RESAMPLES per round, until the ranking's probability reaches TARGET. Its
    matches at the stop, and whether its ranking was the true one."""
    rng = np.random.default_rng(seed)
    names = [f"elo{elo:g}" for elo in elos]
    pdf = dict(zip(itertools.combinations(names, 2), _pair_pdfs(elos, draw_rate), strict=True))
    matches: list[MatchOutcome] = []
    played: dict[tuple[str, str], int] = {}
    while True:
        view = round_view(matches, names, seed=seed, resamples=ADAPTIVE_RESAMPLES)
        if view.probability >= TARGET:
            truth = tuple(name for _, name in sorted(zip(elos, names, strict=True), reverse=True))
            return len(matches), view.ranking == truth
        picks = pick_round_from_view(view, played, k=ROUND_MATCHES, cap=PAIR_CAP)
        for a, b in picks:
            games = tuple(float(x) / 2 for x in rng.choice(3, size=2, p=pdf[(a, b)]))
            matches.append(MatchOutcome(len(matches), a, b, games))
            played[(a, b)] = played.get((a, b), 0) + 1


def _adaptive_leagues(
    elos: tuple[float, ...], draw_rate: float, seeds: list[int]
) -> list[tuple[int, bool]]:
    """`adaptive_league` for each seed, over the machine's cores (one BLAS thread each:
    the fit's small matrices run slower threaded)."""
    os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = "1"
    workers = min(len(seeds), os.cpu_count() or 1)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        runs = [pool.submit(adaptive_league, elos, draw_rate, seed) for seed in seeds]
        return [run.result() for run in runs]


@dataclass(frozen=True, slots=True)
class LeagueFigures:
    """One league shape's round robin and adaptive figures."""

    round_robin: int
    """Total matches of the fewest-matches round robin ranking right in TARGET of leagues."""
    round_robin_share: float
    adaptive: list[int]
    """Each adaptive league's matches at its stop."""
    adaptive_right: float
    """The share of stopped adaptive leagues whose ranking was the true one."""

    @property
    def ratio(self) -> float:
        return self.round_robin / statistics.fmean(self.adaptive)


def league_figures(
    elos: tuple[float, ...], draw_rate: float, robin: int, leagues: int, seed: int
) -> LeagueFigures:
    """Simulate `robin` round robin and `leagues` adaptive leagues of policies at `elos`."""
    per_pair, share = round_robin_needs(elos, draw_rate, robin, np.random.default_rng(seed))
    stopped = _adaptive_leagues(elos, draw_rate, [seed * 100_000 + i for i in range(leagues)])
    return LeagueFigures(
        per_pair * math.comb(len(elos), 2),
        share,
        [n for n, _ in stopped],
        statistics.fmean(float(right) for _, right in stopped),
    )


def adaptive_section(args: argparse.Namespace) -> list[Target]:
    """Matches to a ranking right with probability 0.9: round robin against adaptive."""
    leagues = args.leagues if args.leagues is not None else max(1, min(24, args.tests // 80))
    robin = min(200, max(20, 10 * leagues))
    began = time.perf_counter()
    spread = league_figures(ADAPTIVE_ELOS, args.draw_rate, robin, leagues, 2 * args.seed)
    even = league_figures(EVEN_ELOS, args.draw_rate, robin, leagues, 2 * args.seed + 1)
    seconds = time.perf_counter() - began

    table = Table(
        title=f"Adaptive schedule, 8 policies: {robin:,} round robin and {leagues:,} adaptive "
        f"leagues per figure, draw rate "
        f"{args.draw_rate:g}, stop at P(ranking) >= {TARGET:g}, {ROUND_MATCHES} matches a "
        f"round, {ADAPTIVE_RESAMPLES} resamples a round"
    )
    for column in ("figure", "Elo 0..560", "30 Elo apart"):
        table.add_column(column, justify="left" if column == "figure" else "right")
    table.add_row(
        f"round robin: fewest matches ranking right in {TARGET:.0%} of leagues",
        *(f"{f.round_robin:,} ({f.round_robin_share:.1%})" for f in (spread, even)),
    )
    table.add_row(
        "adaptive: mean matches at the stop",
        *(f"{statistics.fmean(f.adaptive):,.0f}" for f in (spread, even)),
    )
    table.add_row(
        "adaptive: median / 95th percentile matches",
        *(
            f"{np.median(f.adaptive):,.0f} / {np.percentile(f.adaptive, 95):,.0f}"
            for f in (spread, even)
        ),
    )
    table.add_row(
        "adaptive: share of stopped leagues ranked right",
        *(f"{f.adaptive_right:.1%}" for f in (spread, even)),
    )
    table.add_row(
        "round robin / adaptive mean matches", *(f"{f.ratio:.2f}x" for f in (spread, even))
    )
    Console(width=110).print(table)
    Console().print(
        f"Elo 0..560 = {', '.join(f'{e:g}' for e in ADAPTIVE_ELOS)}; round robin: the point "
        "estimate's ranking after n matches per pair, n = 1, 2, ...; adaptive: round_view and "
        f"pick_round_from_view, one bootstrap per round; {seconds:.1f} s",
        style="dim",
    )
    return [
        Target(
            "round robin / adaptive matches (Elo 0..560)", f"{spread.ratio:.2f}x",
            f">= {MIN_ADAPTIVE_RATIO}x", spread.ratio >= MIN_ADAPTIVE_RATIO,
        ),
    ]  # fmt: skip


SECTIONS: list[Section] = [
    sprt_section,
    adaptive_section,
]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tests", type=int, default=2000, help="simulated tests per hypothesis")
    parser.add_argument("--draw-rate", type=float, default=0.2, help="per game")
    parser.add_argument("--max-matches", type=int, default=100_000, help="the SPRT's match cap")
    parser.add_argument("--check", type=int, default=5, help="runs replayed by SequentialTest")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--leagues", type=int, default=None,
        help="simulated adaptive leagues per figure (default: --tests / 80, 1 to 24); the round "
        "robin simulates 10x as many, 20 to 200",
    )  # fmt: skip
    args = parser.parse_args()
    targets = [target for section in SECTIONS for target in section(args)]
    table = Table(title="targets")
    for column in ("figure", "value", "target", ""):
        table.add_column(column, justify="left" if column == "figure" else "right")
    for t in targets:
        table.add_row(t.figure, t.value, t.target, "met" if t.met else "MISSED")
    Console(width=110).print(table)


if __name__ == "__main__":
    main()
