"""An A/B pair of policies in words: what differs, the Bradley-Terry difference, the head
to head, and what could mislead a reader (a side whose play was largely its fallback's, an
SPRT whose verdict is the one that decides)."""

from __future__ import annotations

from typing import Any

__all__ = ["OWN_PLAY_FLOOR", "ab_sentence"]

OWN_PLAY_FLOOR = 0.9
"""Below this share of its own decisions, a policy's results are partly its fallback's."""


def ab_sentence(
    ab: dict[str, Any], sprt: dict[str, Any] | None = None, *, partial: str | None = None
) -> str:
    """An A/B pair of the tables (`league_tables`' `ab`) as a sentence: what differs, the
    Bradley-Terry difference with its interval, and the head to head in words; then, where
    a side played under `OWN_PLAY_FLOOR` of its own decisions, whose play the rest was, and
    where the run's SPRT (`sprt`, as the stopping rules report it) tests this pair, that its
    verdict is the one that decides; on a run cut short, `partial`
    (`league.summary.RunStatus.sentence`) says how short."""
    a, b, what = ab["a"], ab["b"], ab.get("differs") or "prompt"
    diff = ab.get("bt_difference")
    rated = (
        f"{a} rates {diff['value']:+.0f} Elo against {b} by Bradley-Terry "
        f"(95% interval {diff['low']:+.0f} to {diff['high']:+.0f})"
        if diff
        else f"{a} and {b} have no rated match yet"
    )
    h2h = ab.get("h2h")
    if h2h:
        wins, draws, losses, nc = h2h
        met = f"; head to head {a} won {wins}, drew {draws} and lost {losses} of its games with {b}"
        met += f" ({nc} no-contest)" if nc else ""
    else:
        met = "; they have not met"
    sent = ab.get("decodings")  # a decoding or schema form pair: what each side sends
    forms = f": {sent[0]} vs {sent[1]}" if sent else ""
    said = f"{what} A/B, {a} vs {b} (they differ in {what} only{forms}): {rated}{met}."
    own = ab.get("own_play") or {}
    for name in (a, b):
        share = own.get(name)
        if share is not None and share < OWN_PLAY_FLOOR:
            fallback = ab.get("fallback") or "fallback baseline"
            said += (
                f" {name}: {share:.0%} own play; the rest was the {fallback}'s: this compares "
                "fallbacks as much as models."
            )
    if sprt and {sprt["first"], sprt["second"]} == {a, b}:
        said += (
            f" The SPRT below decides this pair ({sprt['matches']} matches counted in schedule "
            "order); this interval is over every finished game, for reading only."
        )
    if partial:
        said += f" A partial run: {partial}."
    return said
