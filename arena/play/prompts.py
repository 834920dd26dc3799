"""Prompt templates: `$name` placeholders, hashed, checked up front.

Templates are text files under `prompts/<family>/`, in Python `string.Template`
syntax so JSON braces need no escaping. The arena writes the first line of
every prompt itself (the resolved game, the seat's alias and side); the
template follows. An unknown placeholder is an error naming it, raised when
the template is loaded, before any game starts.

A template may mark where its stable part ends (what stays the same through
a game: the rules, the reply format's preamble) with one line that is exactly
`STABLE_END`. The line itself is never sent. A policy with `layout = "chat"`
sends the stable part (the arena's first line included) as the system message
and the rest as the user message, so a provider's prompt cache can keep it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from string import Template
from typing import Any, Protocol

import games

PROMPT_PROTOCOL = 2
"""The version of the text the arena writes itself into a text seat's prompts: the first
line, the refusals and their retry, the reply formats, the rules summaries. Raised by one
whenever any of it changes, so a policy's fingerprint (`arena.play.fingerprint`) tells
games asked with the old text from games asked with the new.

2: no text shows a move that could be legal as its example (placeholders such as
`<from>-<to>` instead), a placeholder or several moves in a reply get their own refusal,
a retry after a reply cut at the token limit asks for a short one, every refusal is whole
sentences."""

__all__ = [
    "PLACEHOLDERS",
    "PROMPT_PROTOCOL",
    "STABLE_END",
    "Prompt",
    "PromptError",
    "PromptSource",
    "PromptTemplate",
    "SeatContext",
    "SeatPrompt",
    "beside_config",
    "first_line",
    "load_template",
    "prompts_dir",
    "render",
    "render_prompt",
    "reply_format",
    "reply_value",
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

STABLE_END = "<!-- end of the stable part -->"
"""The line that ends a template's stable part (an HTML comment: invisible where the
template is read as markdown)."""


class PromptError(ValueError):
    """A template that cannot be used, with the name and the fix."""


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    """A loaded template, its path relative to `prompts/` and its SHA-256 (of the file)."""

    path: str
    template: Template
    """The text up to the stable part's end (the whole text when it is not marked)."""
    sha256: str
    rest: Template | None = None
    """The text after the `STABLE_END` line, or None when the template has none."""
    lists_moves: bool = False
    """Whether the template shows the legal moves (`$legal_moves`): one that leaves them
    out leaves them out of its retry too, unless the policy says otherwise. Read once, when
    the template is loaded (every decision asks)."""


@dataclass(frozen=True, slots=True)
class Prompt:
    """A rendered prompt: its text, and how many of its first characters are its stable
    part (the arena's first line, and the template up to its `STABLE_END` line)."""

    text: str
    stable: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.stable <= len(self.text):
            raise ValueError(
                f"stable part of {self.stable} characters in a prompt of {len(self.text)}"
            )

    @property
    def messages(self) -> tuple[str, str]:
        """(system, user): the stable part and the rest."""
        return self.text[: self.stable], self.text[self.stable :]


def prompts_dir() -> Path:
    """`./prompts` when the working folder has one, else the project's own."""
    local = Path.cwd() / "prompts"
    return local if local.is_dir() else Path(__file__).resolve().parents[2] / "prompts"


def beside_config(path: str) -> bool:
    """Whether a template path is read from the config file's folder (it starts with `./`,
    `../` or `/`) rather than from under `prompts/`."""
    return path.startswith(("./", "../", "/"))


@cache
def load_template(path: str, *, folder: Path | None = None) -> PromptTemplate:
    """Load and check a template by its path: under `prompts/` (e.g. `board/default.md`),
    or, for a path that starts with `./`, `../` or `/`, from the config file's `folder`
    (e.g. `./mine.md`). Its `path` is the path as written."""
    if beside_config(path):
        file = (folder or Path.cwd()) / path
        where = f"beside the config, in {folder or Path.cwd()}"
    else:
        file, where = prompts_dir() / path, f"under {prompts_dir()}"
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise PromptError(f"prompt template {path!r} not found {where}: check the path") from exc
    lines = text.splitlines(keepends=True)
    marks = [n for n, line in enumerate(lines) if line.rstrip("\r\n") == STABLE_END]
    if len(marks) > 1:
        raise PromptError(
            f"prompt template {path!r} marks the end of its stable part {len(marks)} times "
            f"(lines {', '.join(str(n + 1) for n in marks)}): keep one {STABLE_END} line"
        )
    head = "".join(lines[: marks[0]]) if marks else text
    rest = Template("".join(lines[marks[0] + 1 :])) if marks else None
    template = Template(head)
    if not all(t.is_valid() for t in (template, rest) if t is not None):
        raise PromptError(
            f"prompt template {path!r} has a malformed placeholder: write $$ for a literal $"
        )
    names = {n for t in (template, rest) if t is not None for n in t.get_identifiers()}
    unknown = sorted(names - PLACEHOLDERS)
    if unknown:
        raise PromptError(
            f"prompt template {path!r} uses unknown placeholder(s) {', '.join('$' + u for u in unknown)} "
            f"(known: {', '.join(sorted(PLACEHOLDERS))})"
        )
    digest = hashlib.sha256(text.encode()).hexdigest()
    return PromptTemplate(path, template, digest, rest, lists_moves="legal_moves" in names)


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
        standings: tuple[int, int] | None = None,
    ) -> SeatContext:
        """What `seat` is told about `state`: its view, the legal moves, the standings (the
        caller's `standings` of `state` when it has them, else the game's)."""
        if standings is None:
            standings = (game.standing(state, 0), game.standing(state, 1))
        return cls(
            game.name,
            game_index,
            seat,
            aliases[seat],
            aliases[1 - seat],
            game.view(state, seat),
            history,
            game.legal_moves(state, seat) if legal is None else legal,
            standings,
            notes,
            game.reply_key(state),
        )


def _named_side(ctx: SeatContext) -> str | None:
    """The seat's side as the game's view names it (`red`), or None where it names none."""
    sides = ctx.view.get("sides")
    side = sides.get(str(ctx.seat)) if isinstance(sides, dict) else None
    return str(side) if side else None


def _side(ctx: SeatContext) -> str:
    return _named_side(ctx) or f"seat {ctx.seat}"


def first_line(ctx: SeatContext) -> str:
    """The arena's own first line: the resolved game, the alias, the seat, and the side
    where it says more than those two (`cog-1a2b, seat 0, red`, but `Red, seat 0`)."""
    side = _named_side(ctx)
    shown = f", {side}" if side and side.casefold() != ctx.alias.casefold() else ""
    return (
        f"GAME: {ctx.game} (game {ctx.game_index} of 2) | "
        f"YOU ARE: {ctx.alias}, seat {ctx.seat}{shown}"
    )


def _history(ctx: SeatContext) -> str:
    if not ctx.history:
        return "(no moves yet)"
    numbered = [f"{i}. {move}" for i, move in enumerate(ctx.history, start=1)]
    if len(numbered) > _HISTORY_SHOWN:
        numbered = ["...", *numbered[-_HISTORY_SHOWN:]]
    return " ".join(numbered)


def reply_value(key: str) -> str:
    """The placeholder of a reply format's move: the shape the reader takes, a JSON list for
    the battle's orders (its move help lists the entries), a JSON string for the rest. A
    placeholder, never an example: an example move is copied."""
    return f"[<your {key}>]" if key == "orders" else f'"<your {key}>"'


@cache
def reply_format(key: str) -> str:
    """The reply instructions of `$reply_format` for reply key `key`."""
    return (
        "Reply with ONE JSON object, last in your reply, with your own text in place of each "
        "<...>:\n"
        f'{{"{key}": {reply_value(key)}, "say": "<optional, shown to spectators only, <= 280 '
        'chars>", "notes": "<optional, private notes returned to you next turn, <= 2000 chars>"}\n'
        f"REPLY KEY: {key}"
    )


def render(template: PromptTemplate, ctx: SeatContext, feedback: str | None = None) -> str:
    """The exact prompt text a seat receives."""
    return render_prompt(template, ctx, feedback).text


def _standing(ctx: SeatContext) -> str:
    if ctx.standing is None:
        return "n/a"
    own, other = ctx.standing[ctx.seat], ctx.standing[1 - ctx.seat]
    return f"{own} for you, {other} for {ctx.opponent} (HEURISTIC)"


_VALUES: dict[str, Callable[[SeatContext], str]] = {
    "game": lambda ctx: ctx.game,
    "game_index": lambda ctx: str(ctx.game_index),
    "rules": lambda ctx: rules_summary(ctx.game),
    "alias": lambda ctx: ctx.alias,
    "opponent": lambda ctx: ctx.opponent,
    "side": _side,
    "board": lambda ctx: games.board_text(ctx.game, ctx.view),
    "history": _history,
    "legal_moves": lambda ctx: ", ".join(ctx.legal) if ctx.legal else "(see the rules)",
    "standing": _standing,
    "notes": lambda ctx: ctx.notes or "(none)",
    "reply_format": lambda ctx: reply_format(ctx.reply_key),
    "reply_key": lambda ctx: ctx.reply_key,
    "move_help": lambda ctx: games.move_help(ctx.game, ctx.view),
    "ply": lambda ctx: str(len(ctx.history) + 1),
}
"""How each placeholder's text is made; only the names a template uses are computed."""


@cache
def _pieces(template: Template) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A template cut once into (texts, names): texts[i] comes before names[i], the last
    text after the last name; `$$` is already a `$` in the texts."""
    texts: list[str] = []
    names: list[str] = []
    source = template.template
    start, text = 0, ""
    for found in template.pattern.finditer(source):
        text += source[start : found.start()]
        start = found.end()
        name = found.group("named") or found.group("braced")
        if name is None:  # `$$`: a literal `$` (a template is checked to hold no other)
            text += template.delimiter
            continue
        texts.append(text)
        names.append(name)
        text = ""
    texts.append(text + source[start:])
    return tuple(texts), tuple(names)


def _substitute(template: Template, values: dict[str, str]) -> str:
    """`template.substitute(values)`, from the template's cached pieces."""
    texts, names = _pieces(template)
    out = [texts[0]]
    for name, text in zip(names, texts[1:], strict=True):
        out.append(values[name])
        out.append(text)
    return "".join(out)


def render_prompt(
    template: PromptTemplate, ctx: SeatContext, feedback: str | None = None
) -> Prompt:
    """The exact prompt a seat receives, with its stable part (the arena's first line, and
    the template up to its `STABLE_END` line when it has one)."""
    names = set(_pieces(template.template)[1])
    if template.rest is not None:
        names.update(_pieces(template.rest)[1])
    values = {name: _VALUES[name](ctx) for name in names}
    stable = f"{first_line(ctx)}\n"
    if template.rest is not None:
        stable += _substitute(template.template, values)
        text = stable + _substitute(template.rest, values)
    else:
        text = stable + _substitute(template.template, values)
    if feedback:
        text = f"{text.rstrip()}\n\n{feedback}\n"
    return Prompt(text, min(len(stable), len(text)))


class PromptSource(Protocol):
    """What a decision request carries to render its prompt from (`SeatPrompt` in a game):
    the decision code renders it, and nothing is asked of the game loop."""

    def render(self, feedback: str | None) -> Prompt:
        """The prompt; `feedback` is the retry's, or None for the first attempt."""
        ...


@dataclass(frozen=True, eq=False)
class SeatPrompt:
    """One seat's prompt for one decision: its template and what the seat may be told then.
    The `SeatContext` is built when the prompt is first rendered, so a seat that reads no
    prompt (scripted, a program) never costs one; a retry renders from the same context."""

    template: PromptTemplate
    game: games.Game[Any]
    state: Any
    seat: int
    game_index: int
    aliases: tuple[str, str]
    history: tuple[str, ...]
    notes: str
    legal: tuple[str, ...]
    standings: tuple[int, int] | None = None
    """The standings of `state` when the loop has them (None: the game is asked)."""

    @cached_property
    def context(self) -> SeatContext:
        """What the prompt may say about the seat's situation."""
        return SeatContext.of(
            self.game,
            self.state,
            self.seat,
            game_index=self.game_index,
            aliases=self.aliases,
            history=self.history,
            notes=self.notes,
            legal=self.legal,
            standings=self.standings,
        )

    def render(self, feedback: str | None) -> Prompt:
        """The prompt, with the retry's `feedback` (None for the first attempt)."""
        return render_prompt(self.template, self.context, feedback)
