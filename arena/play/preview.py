"""`arena prompt`: the exact prompt a seat would get, before it costs a token."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import games
from arena.config import ConfigError, LlmPolicy, load_config
from arena.play.prompts import Prompt, SeatContext, load_template, render_prompt

__all__ = ["SYSTEM_HEADER", "USER_HEADER", "preview_prompt", "shown", "stable_note"]

SYSTEM_HEADER = "===== system message (the stable part) ====="
USER_HEADER = "===== user message ====="
"""How `arena prompt` shows the two messages of the chat layout (neither line is sent)."""


def stable_note(prompt: Prompt) -> str:
    """Where the prompt's stable part ends, for a prompt shown as one text."""
    lines = prompt.text[: prompt.stable].splitlines()
    last = lines[-1].strip() if lines else ""
    # a long line ends in its last words, so the note points at where the part ends
    end = last if len(last) <= 80 else "... " + last[-76:].partition(" ")[2]
    return (
        f"the stable part is the first {len(lines)} line(s), ending {end!r}; "
        'a policy with layout = "chat" sends it as the system message'
    )


def shown(prompt: Prompt, chat: bool) -> str:
    """How `arena prompt` prints a prompt: as one text, or, for a policy with
    `layout = "chat"`, as its two messages under their headers."""
    if not chat:
        return prompt.text
    system, user = prompt.messages
    return f"{SYSTEM_HEADER}\n{system}{USER_HEADER}\n{user}"


def preview_prompt(
    *,
    game: str,
    seed: int,
    ply: int = 1,
    game_index: int = 1,
    seat: int | None = None,
    config: Path | None = None,
    policy: str | None = None,
    card_seed: str | None = None,
    schema_out: list[dict[str, Any]] | None = None,
) -> tuple[Prompt, bool]:
    """Reach ply `ply` with the baseline playing both seats: the prompt of the seat to act,
    and whether the policy sends it in the chat layout (`shown` prints it).

    `seed` is the match seed; a game dealt in cards (backgammon) plays the card of
    `card_seed`, by default card 1 of a `dice = "derived"` run with master seed `seed`. A
    policy with `decoding = "schema"` also appends to `schema_out` what its request adds
    to the body, in its protocol's form."""
    if seed <= 0:
        raise ConfigError(f"--seed {seed}: give a concrete seed >= 1")
    name = games.resolve_entry(game, seed)
    params = {}
    template_path = None
    if config is not None:
        loaded = load_config(config, keys=False)  # nothing is sent: no key is needed
        params = loaded.params_for(name)
        if policy is None or policy not in loaded.policies:
            raise ConfigError(
                f"--policy {policy!r} is not a policy of {config} (known: {', '.join(loaded.policies)})"
            )
    rules = games.load(name, **params)
    if config is not None and policy is not None:
        template_path = loaded.policies[policy].template_for(rules.family)
    folder = loaded.folder if config is not None else None
    template = load_template(template_path or f"{rules.family}/default.md", folder=folder)
    state = rules.initial(_chance(rules, seed, card_seed), game=game_index)
    history: list[str] = []
    for _ in range(ply - 1):
        seats = rules.to_act(state)
        if not seats:
            raise ConfigError(f"--ply {ply}: the baseline game ends after {len(history)} plies")
        moves = {s: rules.baseline(state, s) for s in seats}
        state = rules.apply(state, moves)
        history.append(" ".join(str(m) for m in moves.values()))
    seats = rules.to_act(state)
    if not seats:
        raise ConfigError(f"--ply {ply}: the game is over at that ply")
    if seat is None:
        seat = seats[0]
    elif seat not in seats:
        raise ConfigError(f"--seat {seat} does not act at ply {ply} (seats to act: {list(seats)})")
    context = SeatContext.of(
        rules,
        state,
        seat,
        game_index=game_index,
        aliases=rules.match_format.aliases(seed, game_index),
        history=tuple(history),
        notes="",
    )
    spec = loaded.policies[policy] if config is not None and policy is not None else None
    chat = isinstance(spec, LlmPolicy) and spec.layout == "chat"
    if isinstance(spec, LlmPolicy) and spec.reply_decoding == "schema" and schema_out is not None:
        schema_out.append(_schema_request(spec, rules, state, seat))
    return render_prompt(template, context), chat


def _schema_request(
    spec: LlmPolicy, rules: games.Game[Any], state: Any, seat: int
) -> dict[str, Any]:
    """What a `decoding = "schema"` request adds to the body, in the protocol's own form."""
    import providers  # the request builders: a schema preview only
    from arena.play.schema import reply_schema

    key = rules.reply_key(state)
    legal = rules.legal_moves(state, seat)
    body, kind = reply_schema(key, legal, protocol=spec.provider)
    wire = providers.ProviderSpec(
        protocol=spec.provider, model=spec.model, base_url="http://preview"
    )
    request = providers.CompletionRequest(
        prompt="", max_tokens=1, schema=providers.ReplySchema(key, body, spec.schema_style)
    )
    from providers.pool import WIRE_PROTOCOLS  # the protocols' request builders

    sent = WIRE_PROTOCOLS[spec.provider].build_request(wire, request).json
    shown = {"openai": ("response_format",), "anthropic": ("tools", "tool_choice")}
    keys = shown.get(spec.provider, ("generationConfig",))
    return {"kind": kind, **{k: sent[k] for k in keys if k in sent}}


def _chance(rules: games.Game[Any], seed: int, card_seed: str | None) -> int | str:
    """What the game's chance comes from: the match seed, or a card's seed (`card_seed`, by
    default the game's `derived_chance` of `seed`)."""
    if card_seed is None:
        return rules.derived_chance(seed)
    if not rules.match_format.dealt_in_cards:
        raise ConfigError(
            f"--card-seed: {rules.name} is not dealt in cards (its chance comes from --seed): "
            "remove --card-seed"
        )
    return card_seed
