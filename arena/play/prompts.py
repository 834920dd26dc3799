"""Prompt templates: `$name` placeholders, hashed, checked up front.

Templates are text files under `prompts/<family>/`, in Python `string.Template`
syntax so JSON braces need no escaping. The arena writes the first line of
every prompt itself (the resolved game, the seat's alias and side); the
template follows. An unknown placeholder is an error naming it, raised when
the template is loaded, before any game starts.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from string import Template
from typing import Any

import games

__all__ = [
    "PLACEHOLDERS",
    "PromptError",
    "PromptTemplate",
    "SeatContext",
    "first_line",
    "load_template",
    "prompts_dir",
    "render",
    "rules_summary",
]

PLACEHOLDERS = frozenset(
    {
        "game",
        "rules",
        "alias",
        "opponent",
        "side",
        "board",
        "history",
        "legal_moves",
        "standing",
        "notes",
        "reply_format",
        "reply_key",
        "move_help",
        "ply",
        "game_index",
    }
)
"""Every name a template may use."""

_HISTORY_SHOWN = 60


class PromptError(ValueError):
    """A template that cannot be used, with the name and the fix."""


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    """A loaded template, its path relative to `prompts/` and its SHA-256."""

    path: str
    template: Template
    sha256: str


def prompts_dir() -> Path:
    """`./prompts` when the working folder has one, else the project's own."""
    local = Path.cwd() / "prompts"
    return local if local.is_dir() else Path(__file__).resolve().parent.parent / "prompts"


@cache
def load_template(path: str) -> PromptTemplate:
    """Load and check a template by its path under `prompts/` (e.g. `board/default.md`)."""
    file = prompts_dir() / path
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise PromptError(
            f"prompt template {path!r} not found under {prompts_dir()}: check the path"
        ) from exc
    template = Template(text)
    if not template.is_valid():
        raise PromptError(
            f"prompt template {path!r} has a malformed placeholder: write $$ for a literal $"
        )
    unknown = sorted(set(template.get_identifiers()) - PLACEHOLDERS)
    if unknown:
        raise PromptError(
            f"prompt template {path!r} uses unknown placeholder(s) {', '.join('$' + u for u in unknown)} "
            f"(known: {', '.join(sorted(PLACEHOLDERS))})"
        )
    return PromptTemplate(path, template, hashlib.sha256(text.encode()).hexdigest())


@cache
def rules_summary(game: str) -> str:
    """The short rules text of a game, from `prompts/rules/<game>.md`."""
    file = prompts_dir() / "rules" / f"{game}.md"
    return file.read_text(encoding="utf-8").strip() if file.exists() else ""


@dataclass(frozen=True, slots=True)
class SeatContext:
    """What a prompt may say about one seat's situation; never a policy name."""

    game: str
    game_index: int
    seat: int
    alias: str
    opponent: str
    view: dict[str, Any]
    history: tuple[str, ...]
    legal: tuple[str, ...]
    standing: tuple[int, int] | None
    notes: str
    reply_key: str = "move"

    @classmethod
    def of(
        cls,
        game: games.Game[Any],
        state: Any,
        seat: int,
        *,
        game_index: int,
        aliases: tuple[str, str],
        history: tuple[str, ...],
        notes: str,
        legal: tuple[str, ...] | None = None,
    ) -> SeatContext:
        """What `seat` is told about `state`: its view, the legal moves, the standings."""
        return cls(
            game.name, game_index, seat, aliases[seat], aliases[1 - seat], game.view(state, seat),
            history, game.legal_moves(state, seat) if legal is None else legal,
            (game.standing(state, 0), game.standing(state, 1)), notes, game.reply_key(state),
        )  # fmt: skip


def _side(ctx: SeatContext) -> str:
    sides = ctx.view.get("sides")
    side = sides.get(str(ctx.seat)) if isinstance(sides, dict) else None
    return str(side) if side else f"seat {ctx.seat}"


def first_line(ctx: SeatContext) -> str:
    """The arena's own first line: the resolved game, the alias and side."""
    return f"GAME: {ctx.game} (game {ctx.game_index} of 2) | YOU ARE: {ctx.alias}, seat {ctx.seat}, {_side(ctx)}"


def _history(ctx: SeatContext) -> str:
    if not ctx.history:
        return "(no moves yet)"
    numbered = [f"{i}. {move}" for i, move in enumerate(ctx.history, start=1)]
    if len(numbered) > _HISTORY_SHOWN:
        numbered = ["...", *numbered[-_HISTORY_SHOWN:]]
    return " ".join(numbered)


def _reply_format(key: str) -> str:
    return (
        "Reply with ONE JSON object, last in your reply:\n"
        f'{{"{key}": "<your {key}>", "say": "<optional, shown to spectators only, <= 280 chars>", '
        '"notes": "<optional, private notes returned to you next turn, <= 2000 chars>"}\n'
        f"REPLY KEY: {key}"
    )


def render(template: PromptTemplate, ctx: SeatContext, feedback: str | None = None) -> str:
    """The exact prompt text a seat receives."""
    standing = (
        f"{ctx.standing[ctx.seat]} for you, {ctx.standing[1 - ctx.seat]} for {ctx.opponent} (HEURISTIC)"
        if ctx.standing is not None
        else "n/a"
    )
    values = {
        "game": ctx.game,
        "game_index": str(ctx.game_index),
        "rules": rules_summary(ctx.game),
        "alias": ctx.alias,
        "opponent": ctx.opponent,
        "side": _side(ctx),
        "board": games.board_text(ctx.game, ctx.view),
        "history": _history(ctx),
        "legal_moves": ", ".join(ctx.legal) if ctx.legal else "(see the rules)",
        "standing": standing,
        "notes": ctx.notes or "(none)",
        "reply_format": _reply_format(ctx.reply_key),
        "reply_key": ctx.reply_key,
        "move_help": games.move_help(ctx.game, ctx.view),
        "ply": str(len(ctx.history) + 1),
    }
    text = f"{first_line(ctx)}\n{template.template.substitute(values)}"
    if feedback:
        text = f"{text.rstrip()}\n\n{feedback}\n"
    return text
