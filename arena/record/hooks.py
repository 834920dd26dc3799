"""What an episode does around its games beyond the generic loop: the episode hooks.

The game loop (`arena.play.episode`) plays the games of an episode and asks
its hooks for the rest; the run's writer tells them when an episode's result
is durable. Each game's match format names its kind of chance, and
`episode_hooks` gives the hooks for that kind:

- `seed`: the match seed is all the chance there is; nothing to open, keep or
  reveal (`PlainEpisodes`);
- `card`: a card seed is drawn when the episode starts, committed to the
  ledger before the first roll and revealed once the card's result is stored
  (or when the card is cut short); a cut card keeps its finished games and is
  replaced (`cards.CardEpisodes`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from arena.record.replay import Replay

__all__ = ["EpisodeHooks", "EpisodeScope", "PlainEpisodes", "episode_hooks"]


class EpisodeScope(Protocol):
    """One episode in play, from the moment its hooks open it until they close it."""

    @property
    def chance(self) -> int | str:
        """What each game's `initial` is given: the match seed, or a card seed."""
        ...

    async def keep(self, replay: Replay) -> None:
        """A game finished and more follow: `replay` holds the games played so far."""
        ...

    def integrity(self) -> dict[str, Any]:
        """The episode's integrity block for its replay, once its games are played."""
        ...


class EpisodeHooks(Protocol):
    """What one game's episodes need around their games, for a run and for `arena verify`."""

    def open(
        self, episode: str, base: str, k: int, seed: int
    ) -> AbstractAsyncContextManager[EpisodeScope]:
        """Open episode `episode` (a play of episode `base`, the k-th match of its pair, on
        `seed`); if an exception or a cancellation ends the block, the episode is cut short."""
        ...

    def stored(self, replay: Replay) -> None:
        """The episode's replay and its row are durable (called by the run's one writer)."""
        ...

    def resume(self, store: Callable[[Replay], object], finished: set[str]) -> None:
        """Before a session plays: settle what a killed session left (`finished`: the
        episodes the store holds), storing any replay that must be kept with `store`."""
        ...

    def cut(self, episode: str) -> Replay | None:
        """The replay to store for `episode`, cut short mid-run (the process playing it was
        lost), or None: a cut card keeps the games it finished; a game of any other kind
        is played again from its start, and nothing is kept."""
        ...

    def verify(self, replay: Replay) -> str | None:
        """The episode-level check of `arena verify`: what is wrong, or None."""
        ...


@dataclass(frozen=True, slots=True)
class _SeedScope:
    chance: int

    async def keep(self, replay: Replay) -> None:
        """Nothing to keep: a cut episode is played again whole."""

    def integrity(self) -> dict[str, Any]:
        """No episode-wide integrity data."""
        return {}


class PlainEpisodes:
    """The hooks of games whose chance is the match seed: none to speak of."""

    @asynccontextmanager
    async def open(self, episode: str, base: str, k: int, seed: int) -> AsyncIterator[_SeedScope]:
        """The match seed is the chance (an episode played again has the same)."""
        yield _SeedScope(seed)

    def stored(self, replay: Replay) -> None:
        """Nothing waits on the result."""

    def resume(self, store: Callable[[Replay], object], finished: set[str]) -> None:
        """A killed session leaves nothing: its unfinished episodes are played again."""

    def cut(self, episode: str) -> Replay | None:
        """Nothing is kept: the episode is played again whole."""
        return None

    def verify(self, replay: Replay) -> str | None:
        """Nothing beyond the games themselves to check."""
        return None


def episode_hooks(
    chance: Literal["seed", "card"],
    out: Path | None,
    *,
    dice: Literal["verifiable", "derived"] = "verifiable",
    master: int = 0,
) -> EpisodeHooks:
    """The hooks for a game whose match format has `chance`, in run folder `out` (None: a
    replay checked on its own); `dice` and `master` say where card seeds come from."""
    if chance == "card":  # the cards (and backgammon's engine) only for a game with them
        from arena.record.cards import CardEpisodes  # backgammon's cards: card games only

        return CardEpisodes(out, dice, master)
    return PlainEpisodes()
