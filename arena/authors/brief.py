"""The brief a model writes a program from: the project's own texts, one per game.

`prompts/author/brief.md` (a `string.Template`) is filled with the game's rules
summary (`prompts/rules/<game>.md`, the text a model seat's prompts carry), the
program interface (the view of the opening position as the program receives
it, `ctx` and its helpers), the node budget and move timeout, what the static
check refuses (`arena.programs.limits`), the determinism rule, one example
program (`players/greedy.py`) and the exact reply format: one Python file in
one fenced block. Its first line, `PROGRAM FOR: <game>`, is machine-readable:
the mock answers a brief with a program for that game.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from string import Template

import games
from arena.play.prompts import prompts_dir, rules_summary
from arena.programs.limits import ALLOWED_MODULES, FORBIDDEN_NAMES, timeout_for

__all__ = ["BRIEF", "EXAMPLE", "Brief", "brief_for"]

BRIEF = "author/brief.md"
"""The brief's template, under `prompts/`."""
EXAMPLE = "greedy.py"
"""The example program, under the project's `players/`."""

_SETUP = """    def choose_setup(self, view):
        # Stratego only: 40 piece codes, your back rank first, each rank from a to j
"""


@dataclass(frozen=True, slots=True)
class Brief:
    """A game's brief: its text and the SHA-256 a manifest records."""

    game: str
    text: str

    @property
    def sha256(self) -> str:
        """The SHA-256 of the brief's text."""
        return hashlib.sha256(self.text.encode()).hexdigest()


def brief_for(game_name: str, *, node_budget: int) -> Brief:
    """The brief for a program of `game_name` under `node_budget` nodes a move."""
    game = games.load(game_name)
    if game.match_format.program_timeout_s is None:
        raise ValueError(
            f"programs do not play {game_name}: author programs for one of "
            f"{', '.join(games.program_games())}"
        )
    state = game.initial(game.derived_chance(1), game=1)
    seat = game.to_act(state)[0]
    view = {
        **game.view(state, seat),
        "legal_moves": list(game.legal_moves(state, seat)),
        "state": 1,
        "node_budget_left": node_budget,
    }
    text = Template((prompts_dir() / BRIEF).read_text(encoding="utf-8")).substitute(
        game=game_name,
        rules=rules_summary(game_name),
        setup_note=_SETUP if game.reply_key(state) == "setup" else "",
        view=json.dumps(view, ensure_ascii=False),
        node_budget=node_budget,
        timeout_s=f"{timeout_for(game_name):g}",
        allowed=", ".join(sorted(ALLOWED_MODULES)),
        forbidden=", ".join(sorted(FORBIDDEN_NAMES)),
        example=_example().strip("\n"),
    )
    return Brief(game_name, text)


def _example() -> str:
    return (Path(__file__).resolve().parents[2] / "players" / EXAMPLE).read_text(encoding="utf-8")
