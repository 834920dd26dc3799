"""A sequential probability ratio test of two policies on match pair outcomes.

The test chess-engine testing runs (fishtest, fastchess): the generalised SPRT on the
pentanomial model, on the logistic Elo scale. A match is two games on one seed with
seats swapped; its pair outcome is the first policy's points over both games, a draw
counting half: 0, 0.5, 1, 1.5 or 2. The pentanomial counts say how many matches gave
each outcome (index 0..4).

H0 says the first policy's expected score per game is `s0 = L(elo0)`, H1 that it is
`s1 = L(elo1)`, with `L(elo) = 1 / (1 + 10**(-elo / 400))`. Neither hypothesis fixes
the distribution of the pair outcomes, only its mean: the log-likelihood ratio compares
the most likely pentanomial distribution with mean `s1` against the most likely one with
mean `s0` (`llr`). The test stops at the first match that takes it past
`log(beta / (1 - alpha))` (accept H0) or `log((1 - beta) / alpha)` (accept H1).

The constrained maximum-likelihood distribution is the exact one over all five
outcomes. With empirical frequencies `p_i` at per-game scores `a_i = i / 4` it is
`q_i = p_i / (1 + theta (a_i - s))`, `theta` the root in `(-1/(1-s), 1/s)` of
`sum p_i (a_i - s) / (1 + theta (a_i - s)) = 0`. An outcome never seen adds nothing to
the likelihood and gets no mass, with one exception: when the seen outcomes cannot
reach the mean `s` (all of them on one side, as after a run of 2-0 wins), `theta`
stops at the end of its interval and the extreme outcome on the far side (0 or 2
points) takes exactly the mass the mean needs. That is the Karush-Kuhn-Tucker
solution, and the limit of fishtest's rule (a zero count replaced by a tiny epsilon)
as the epsilon goes to 0; it gives a finite LLR for any counts, one outcome seen or
five (`N log(s1 / s0)` after N 2-0 wins). No match, no evidence: LLR 0.

`SequentialTest` consumes matches strictly in schedule order, whatever order their
results arrive in, so concurrency and resume never change a verdict.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

__all__ = [
    "NELO_PER_T",
    "OUTCOMES",
    "Estimate",
    "SequentialTest",
    "SprtSettings",
    "Status",
    "Verdict",
    "bounds",
    "decide",
    "elo_estimate",
    "elo_from_score",
    "expected_score",
    "llr",
    "llr_many",
    "nelo_estimate",
    "pair_outcome",
    "score_estimate",
]

OUTCOMES = (0.0, 0.5, 1.0, 1.5, 2.0)
"""A match's pair outcomes: the first policy's points over its two games."""
NELO_PER_T = 800.0 / math.log(10.0)
"""Normalised Elo per unit of per-game t-value (fishtest's `nelo_divided_by_nt`)."""

Verdict = Literal["H0", "H1"]
"""H0: not stronger by `elo0`; H1: stronger by at least `elo1`."""
Status = Literal["H0", "H1", "inconclusive", "running"]
"""A verdict, the match cap reached without one, or neither yet."""

_SCORES = np.array(OUTCOMES) / 2.0  # per-game mean score of each pair outcome
_Z975 = 1.959963984540054
# The root solver stops once theta moves by less than this share of its interval; far
# below what moves an LLR shown to four places, far above rounding noise.
_THETA_TOLERANCE = 1e-14
_MAX_STEPS = 200

_FloatArray = npt.NDArray[np.float64]


class SprtSettings(Protocol):
    """What the test needs to know (`arena.config.SprtTable` has it)."""

    @property
    def elo0(self) -> float:
        """H0's Elo difference (logistic)."""
        ...

    @property
    def elo1(self) -> float:
        """H1's Elo difference, above `elo0`."""
        ...

    @property
    def alpha(self) -> float:
        """The chance of accepting H1 when H0 holds."""
        ...

    @property
    def beta(self) -> float:
        """The chance of accepting H0 when H1 holds."""
        ...

    @property
    def max_matches(self) -> int:
        """Counted matches after which the test stops, verdict or not."""
        ...


def expected_score(elo: float) -> float:
    """The logistic expected score per game of a policy `elo` points stronger."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def elo_from_score(score: float) -> float:
    """The logistic Elo difference whose expected score is `score` (±inf at 1 and 0)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def pair_outcome(results: Sequence[float | None]) -> float | None:
    """A match's pair outcome from its two games' results from the first policy's side
    (1.0 win, 0.5 draw, 0.0 loss, None no contest); None when either game has none."""
    if len(results) != 2:
        raise ValueError(
            f"a match has two games, and {len(results)} results were given ({results!r}); "
            "pass the first policy's result in each of its two games"
        )
    for result in results:
        if result is not None and result not in (0.0, 0.5, 1.0):
            raise ValueError(
                f"game result {result!r} is not a score; use 1.0 (win), 0.5 (draw), "
                "0.0 (loss) or None (no contest)"
            )
    first, second = results
    return None if first is None or second is None else first + second


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """The LLR bounds (lower, upper): `log(beta / (1 - alpha))`, `log((1 - beta) / alpha)`."""
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def decide(value: float, lower: float, upper: float) -> Verdict | None:
    """The verdict an LLR of `value` gives: H1 at or above `upper`, H0 at or below
    `lower`, else None."""
    if value >= upper:
        return "H1"
    if value <= lower:
        return "H0"
    return None


# ---------------------------------------------------------------------------
# The log-likelihood ratio


def _theta(p: _FloatArray, s: float) -> _FloatArray:
    """The multiplier `theta` of the mean-`s` maximum-likelihood distribution of every row
    of frequencies `p` (shape (M, 5)): a root bracketed and found by Newton's method,
    falling back to bisection when a step would leave the bracket."""
    d = _SCORES - s
    low_end, high_end = -1.0 / (1.0 - s), 1.0 / s
    seen = p > 0

    def secular(theta: _FloatArray) -> tuple[_FloatArray, _FloatArray]:
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(seen, d / np.where(seen, 1.0 + theta[:, None] * d, 1.0), 0.0)
        return (p * ratio).sum(axis=1), -(p * ratio**2).sum(axis=1)

    rows = p.shape[0]
    # An unseen extreme outcome lets theta reach its end of the interval; it stops there
    # when even that cannot bring the mean to s (the rule in the module docstring).
    at_low = ~seen[:, 4] & (secular(np.full(rows, low_end))[0] <= 0)
    at_high = ~seen[:, 0] & (secular(np.full(rows, high_end))[0] >= 0) & ~at_low
    theta = np.zeros(rows)
    low, high = np.full(rows, low_end), np.full(rows, high_end)
    tolerance = _THETA_TOLERANCE * (high_end - low_end)
    edge = 1e-9 * (high_end - low_end)
    for _ in range(_MAX_STEPS):
        value, slope = secular(theta)
        low = np.where(value > 0, theta, low)
        high = np.where(value < 0, theta, high)
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = theta - value / slope
        # A Newton step that lands on an end of the interval (within rounding of it, where a
        # seen outcome's weight is 1/0) is no step: bisect instead.
        inside = (newton > np.maximum(low, low_end + edge)) & (
            newton < np.minimum(high, high_end - edge)
        )
        step = np.where(value == 0, theta, np.where(inside, newton, (low + high) / 2))
        moved = np.abs(step - theta)
        theta = step
        if np.all((moved <= tolerance) | at_low | at_high):
            break
    return np.where(at_low, low_end, np.where(at_high, high_end, theta))


def llr_many(counts: npt.ArrayLike, elo0: float, elo1: float) -> _FloatArray:
    """The log-likelihood ratio of H1 (`elo1`) against H0 (`elo0`) for every row of
    pentanomial `counts` (shape (..., 5); counts may be fractional, never negative)."""
    n = np.asarray(counts, dtype=np.float64)
    if n.shape[-1:] != (5,) or np.any(n < 0) or not np.all(np.isfinite(n)):
        raise ValueError(
            f"pentanomial counts must be non-negative, finite and 5 to a row, not shape "
            f"{n.shape}; pass how many matches gave 0, 0.5, 1, 1.5 and 2 points"
        )
    flat = n.reshape(-1, 5)
    total = flat.sum(axis=1)
    played = total > 0
    p = flat[played] / total[played, None]
    logs = []
    for elo in (elo0, elo1):
        s = expected_score(elo)
        if not 0.0 < s < 1.0:
            raise ValueError(
                f"elo {elo} puts the expected score at {s}, out of (0, 1); "
                "test hypotheses within a few thousand Elo"
            )
        theta = _theta(p, s)
        with np.errstate(divide="ignore", invalid="ignore"):
            logs.append(np.where(p > 0, np.log1p(theta[:, None] * (_SCORES - s)), 0.0))
    # log(q1 / q0) = log(1 + theta0 d0) - log(1 + theta1 d1): the frequencies cancel.
    out = np.zeros(flat.shape[0])
    out[played] = total[played] * (p * (logs[0] - logs[1])).sum(axis=1)
    return out.reshape(n.shape[:-1])


def llr(counts: Sequence[float], elo0: float, elo1: float) -> float:
    """The log-likelihood ratio of H1 (`elo1`) against H0 (`elo0`) for pentanomial
    `counts` (matches that gave 0, 0.5, 1, 1.5 and 2 points)."""
    return float(llr_many([counts], elo0, elo1)[0])


# ---------------------------------------------------------------------------
# Estimates


@dataclass(frozen=True, slots=True)
class Estimate:
    """A point estimate with its 95% interval (NaN with no matches; ±inf unbounded)."""

    value: float
    low: float
    high: float

    def to_json(self) -> dict[str, float | None]:
        """The three numbers, None where one is not finite (JSON has no infinity)."""
        numbers = {"value": self.value, "low": self.low, "high": self.high}
        return {k: v if math.isfinite(v) else None for k, v in numbers.items()}


_NOTHING = Estimate(math.nan, math.nan, math.nan)


def _moments(counts: Sequence[float]) -> tuple[float, float, float, float]:
    """Matches, mean and variance of the per-match score, and `N var(t)` in the large-N
    limit for the t-value `t = (mean - 0.5) / sd`."""
    n = np.asarray(counts, dtype=np.float64)
    total = float(n.sum())
    p = n / total
    mean = float(p @ _SCORES)
    var = float(p @ (_SCORES - mean) ** 2)
    if var <= 0:
        return total, mean, var, 1.0
    t = (mean - 0.5) / math.sqrt(var)
    skew = float(p @ (_SCORES - mean) ** 3) / var**1.5
    kurt = float(p @ (_SCORES - mean) ** 4) / var**2
    # Delta method for t = (mean - 0.5) / sd: N var(t) -> 1 - t skew + t^2 (kurt - 1) / 4.
    return total, mean, var, max(1.0 - t * skew + t * t * (kurt - 1.0) / 4.0, 0.0)


def score_estimate(counts: Sequence[float]) -> Estimate:
    """The first policy's mean score per game, `s +- 1.96 sqrt(var / N)` with `var` the
    variance of the per-match score (per-game mean), clipped to [0, 1]."""
    if sum(counts) <= 0:
        return _NOTHING
    total, mean, var, _ = _moments(counts)
    half = _Z975 * math.sqrt(var / total)
    return Estimate(mean, max(mean - half, 0.0), min(mean + half, 1.0))


def elo_estimate(counts: Sequence[float]) -> Estimate:
    """The logistic Elo difference: the score estimate and its interval mapped through
    `-400 log10(1/s - 1)`; an end at score 0 or 1 is unbounded."""
    score = score_estimate(counts)
    if math.isnan(score.value):
        return _NOTHING
    return Estimate(*(elo_from_score(x) for x in (score.value, score.low, score.high)))


def nelo_estimate(counts: Sequence[float]) -> Estimate:
    """Normalised Elo as fishtest defines it for pentanomial results:
    `(s - 0.5) / sqrt(2 var) * 800 / ln 10`, `var` the per-match score's variance
    (`2 var` the per-game variance without the pairing's correlation). Its interval is
    fishtest's too: the t-value's delta-method standard error, which also counts the
    uncertainty of `var`. Undefined (NaN, or ±inf away from 0.5) when `var` is 0."""
    if sum(counts) <= 0:
        return _NOTHING
    total, mean, var, var_t = _moments(counts)
    if var <= 0:
        value = math.nan if mean == 0.5 else math.copysign(math.inf, mean - 0.5)
        return Estimate(value, value, value)
    scale = NELO_PER_T / math.sqrt(2.0)
    value = scale * (mean - 0.5) / math.sqrt(var)
    half = scale * _Z975 * math.sqrt(var_t / total)
    return Estimate(value, value - half, value + half)


# ---------------------------------------------------------------------------
# The test, fed in schedule order


class SequentialTest:
    """The SPRT of a run's two policies, fed match results as they arrive.

    `add(index, outcome)` takes a match's schedule index (from 0) and its pair outcome
    (None for a no-contest, which counts for nothing). Results may arrive in any order:
    the test consumes them strictly by index, holding a result until every earlier one
    is in. The verdict falls at the first match that takes the LLR to a bound and never
    changes; the test also stops once `max_matches` matches have counted (no verdict:
    inconclusive). Matches consumed after it stopped are counted apart (`counts_after`).
    """

    def __init__(self, settings: SprtSettings) -> None:
        self.elo0, self.elo1 = float(settings.elo0), float(settings.elo1)
        self.alpha, self.beta = float(settings.alpha), float(settings.beta)
        self.max_matches = int(settings.max_matches)
        _check(self.elo0, self.elo1, self.alpha, self.beta, self.max_matches)
        self.lower, self.upper = bounds(self.alpha, self.beta)
        self._waiting: dict[int, float | None] = {}
        self._next = 0
        self._counts = [0] * 5
        self._after = [0] * 5
        self._no_contests = 0
        self._llr = 0.0
        self._verdict: Verdict | None = None
        self._decided_at: int | None = None

    def add(self, index: int, outcome: float | None) -> None:
        """Record match `index`'s pair outcome (0, 0.5, 1, 1.5, 2, or None)."""
        if outcome is not None and (isinstance(outcome, bool) or outcome not in OUTCOMES):
            raise ValueError(
                f"match {index}: pair outcome {outcome!r} is not one of 0, 0.5, 1, 1.5, 2 "
                "or None; pass the first policy's points over the match's two games"
            )
        if index < 0:
            raise ValueError(f"match index {index} is negative; schedule indices start at 0")
        if index < self._next or index in self._waiting:
            raise ValueError(f"match {index} was already added; pass each schedule index once")
        self._waiting[index] = outcome
        while self._next in self._waiting:
            self._consume(self._next, self._waiting.pop(self._next))
            self._next += 1

    def _consume(self, index: int, outcome: float | None) -> None:
        if outcome is None:
            self._no_contests += 1
            return
        slot = OUTCOMES.index(outcome)
        if self.stopped:
            self._after[slot] += 1
            return
        self._counts[slot] += 1
        self._llr = llr(self._counts, self.elo0, self.elo1)
        self._verdict = decide(self._llr, self.lower, self.upper)
        if self._verdict is not None:
            self._decided_at = index

    @property
    def counts(self) -> tuple[int, ...]:
        """Pentanomial counts of the matches that counted toward the verdict."""
        return tuple(self._counts)

    @property
    def counts_after(self) -> tuple[int, ...]:
        """Pentanomial counts of the matches consumed after the test stopped."""
        return tuple(self._after)

    @property
    def matches(self) -> int:
        """Matches that counted toward the verdict."""
        return sum(self._counts)

    @property
    def no_contests(self) -> int:
        """No-contest matches consumed (they count for nothing)."""
        return self._no_contests

    @property
    def next_index(self) -> int:
        """The schedule index the test waits for next."""
        return self._next

    @property
    def llr(self) -> float:
        """The log-likelihood ratio of the counted matches."""
        return self._llr

    @property
    def bounds(self) -> tuple[float, float]:
        """The (lower, upper) LLR bounds."""
        return self.lower, self.upper

    @property
    def verdict(self) -> Verdict | None:
        """The hypothesis accepted, or None (none yet, or inconclusive at the cap)."""
        return self._verdict

    @property
    def decided_at(self) -> int | None:
        """The schedule index of the match at which the verdict fell."""
        return self._decided_at

    @property
    def stopped(self) -> bool:
        """True once a verdict fell or `max_matches` matches counted."""
        return self._verdict is not None or self.matches >= self.max_matches

    @property
    def status(self) -> Status:
        """The verdict, "inconclusive" at the cap without one, else "running"."""
        if self._verdict is not None:
            return self._verdict
        return "inconclusive" if self.stopped else "running"

    def to_json(self) -> dict[str, Any]:
        """The test as summary.json shows it; estimates from the counted matches."""
        return {
            "elo0": self.elo0,
            "elo1": self.elo1,
            "alpha": self.alpha,
            "beta": self.beta,
            "max_matches": self.max_matches,
            "status": self.status,
            "verdict": self._verdict,
            "decided_at": self._decided_at,
            "llr": self._llr,
            "lower": self.lower,
            "upper": self.upper,
            "matches": self.matches,
            "pentanomial": list(self._counts),
            "no_contests": self._no_contests,
            "after": {"matches": sum(self._after), "pentanomial": list(self._after)},
            "score": score_estimate(self._counts).to_json(),
            "elo": elo_estimate(self._counts).to_json(),
            "nelo": nelo_estimate(self._counts).to_json(),
        }


def _check(elo0: float, elo1: float, alpha: float, beta: float, max_matches: int) -> None:
    if not elo0 < elo1:
        raise ValueError(f"elo1 = {elo1} is not above elo0 = {elo0}: H1 must claim more than H0")
    for name, rate in (("alpha", alpha), ("beta", beta)):
        if not 0 < rate < 0.5:
            raise ValueError(f"{name} = {rate} is not an error rate in (0, 0.5); try 0.05")
    if max_matches < 1:
        raise ValueError(f"max_matches = {max_matches} is below 1; allow at least one match")
