"""Bad configs fail before any game, naming the field and the fix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arena.config import ConfigError, load_config, parse_config

BASE: dict[str, Any] = {
    "run": {"name": "t", "seed": 1, "games": ["hex"]},
    "policies": {"a": {"kind": "scripted"}, "b": {"kind": "mock"}},
}


def _with(**changes: Any) -> dict[str, Any]:
    data = {k: dict(v) for k, v in BASE.items()}
    for path, value in changes.items():
        table, key = path.split("__")
        data[table][key] = value
    return data


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (_with(run__games=["hexx"]), r"run\.games: unknown game 'hexx' \(known: .*hex"),
        (_with(run__matchs=2), r"run\.matchs: unknown key 'matchs'"),
        (_with(run__matches=0), r"run\.matches: .*greater than or equal to 1"),
        (_with(run__name="bad name!"), r"run\.name"),
        (
            _with(policies__b={"kind": "mock", "faults": {"slo": 0.1}}),
            r"policies\.b.*unknown fault 'slo'",
        ),
        (
            _with(policies__b={"kind": "mock", "faults": {"slow": 0.7, "empty": 0.7}}),
            r"sum to 1\.400",
        ),
        (_with(policies__b={"kind": "robot"}), r"policies\.b.*kind is one of scripted, mock, llm"),
        (
            _with(policies__a={"kind": "scripted", "baseline": "pincer"}),
            r"policies\.a\.baseline = 'pincer'",
        ),
        ({"run": BASE["run"], "policies": {"a": {"kind": "mock"}}}, r"at least two policies"),
        ({"policies": BASE["policies"]}, r"run: is required"),
    ],
)
def test_bad_configs_name_the_field(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(data)


def test_a_named_baseline_plays_only_the_games_that_name_it() -> None:
    flank = {"kind": "scripted", "baseline": "flank"}
    battle = {"run": {"name": "t", "seed": 1, "games": ["battle"]}, "policies": {"f": flank}}
    battle["policies"]["b"] = {"kind": "mock"}
    assert parse_config(battle).policies["f"].baseline == "flank"  # type: ignore[union-attr]
    for entries, others in ((["battle", "hex"], "['hex']"), (["rotate"], "['breakthrough', ")):
        data = {**battle, "run": {**battle["run"], "games": entries}}
        with pytest.raises(ConfigError) as refused:
            parse_config(data)
        assert f"policies.f.baseline = 'flank' plays only battle, but the run has {others}" in (
            str(refused.value)
        )
        assert str(refused.value).endswith(": use 'default'")


def test_the_baseline_names_a_config_takes_are_those_the_games_declare() -> None:
    import typing

    import games
    from arena.config import ScriptedPolicy

    declared = {name for game in games.names() for name in games.load(game).baselines}
    field = ScriptedPolicy.model_fields["baseline"].annotation
    assert set(typing.get_args(field)) == {"default", "random", *declared}
    assert {"tactician", "pincer", "flank"} <= declared


def test_missing_api_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COG_TEST_KEY", raising=False)
    data = _with(
        policies__b={
            "kind": "llm",
            "provider": "openai",
            "model": "m",
            "api_key_env": "COG_TEST_KEY",
        }
    )
    with pytest.raises(ConfigError, match="COG_TEST_KEY, which is not set: export COG_TEST_KEY"):
        parse_config(data)


def test_unknown_game_table_and_engine_parameter() -> None:
    with pytest.raises(ConfigError, match=r"\[game\.hexagon\] names an unknown game"):
        parse_config({**BASE, "game": {"hexagon": {}}})
    with pytest.raises(
        ConfigError, match=r"\[game\.hex\]: game 'hex' does not take parameters \['size'\]"
    ):
        parse_config({**BASE, "game": {"hex": {"size": 9}}})


def test_deadlines_per_game() -> None:
    config = parse_config(
        {
            **BASE,
            "deadlines": {"first_reply_s": 5, "retry_s": 2, "decision_s": 8},
            "game": {"hex": {"retry_s": 1.5, "episode_wall_s": 60}},
        }
    )
    assert config.deadlines_for("hex").model_dump() == {
        "first_reply_s": 5,
        "retry_s": 1.5,
        "decision_s": 8,
    }
    assert config.deadlines_for("connect-four").decision_s == 8
    assert config.wall_s_for("hex") == 60
    assert config.wall_s_for("quoridor") == 1200


def test_toml_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[run\nname = 1")
    with pytest.raises(ConfigError, match=r"bad\.toml is not valid TOML"):
        load_config(path)
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.toml")


def test_shipped_configs_load() -> None:
    root = Path(__file__).resolve().parents[2]
    for name in (
        "quickstart", "battle", "stratego", "backgammon", "mock-llm", "programs", "local-model",
        "local-model-ab",
    ):  # fmt: skip
        load_config(root / "configs" / f"{name}.toml")
    config = load_config(root / "configs" / "quickstart.toml")
    assert {p.kind for p in config.policies.values()} == {"scripted", "mock"}


def test_a_game_never_stopped_by_time_refuses_a_wall_clock() -> None:
    data = {
        "run": {"name": "bg", "games": ["backgammon"]},
        "game": {"backgammon": {"episode_wall_s": 600}},
        "policies": {"a": {"kind": "scripted"}, "b": {"kind": "scripted"}},
    }
    with pytest.raises(ConfigError, match=r"episode_wall_s = 600: backgammon is never stopped"):
        parse_config(data)
    data["game"] = {"hex": {"dice": "derived"}}
    with pytest.raises(ConfigError, match=r"\[game.hex\] dice = 'derived'"):
        parse_config(data)


def test_an_llm_policy_s_endpoint_settings_are_checked_when_the_config_loads() -> None:
    llm = {"kind": "llm", "provider": "openai", "model": "m"}
    bad = _with(policies__b={**llm, "headers": {"Host": "gateway"}})
    with pytest.raises(ConfigError, match=r"policies\.b.*header 'Host' is written by the HTTP"):
        parse_config(bad, keys=False)
    bad = _with(policies__b={**llm, "base_url": ["http://a/v1", "http://a/v1"]})
    with pytest.raises(ConfigError, match=r"base_url lists http://a/v1 more than once"):
        parse_config(bad, keys=False)


@pytest.mark.parametrize(
    ("name", "found"),
    [("a-vs-b", "'-vs-'"), ("team/bot", "'/'"), ("x-vs-y/z", "'-vs-' and '/'")],
)
def test_a_policy_name_that_match_ids_or_paths_would_misread_is_refused(
    name: str, found: str
) -> None:
    data = {**BASE, "policies": {**BASE["policies"], name: {"kind": "mock"}}}
    with pytest.raises(ConfigError) as caught:
        parse_config(data)
    assert f"policy name {name!r} contains {found}: a match id is" in str(caught.value)
    assert "rename the policy" in str(caught.value)


def test_a_policy_name_with_dashes_and_vs_apart_is_fine() -> None:
    parse_config({**BASE, "policies": {**BASE["policies"], "vs-bot-v2": {"kind": "mock"}}})


@pytest.mark.parametrize(
    ("run", "policy", "message"),
    [
        ({"pool": True, "games": ["hex", "connect-four"]}, {}, r"exactly one games entry.*\['hex', 'connect-four'\]"),
        ({"pool": True, "sprt": {}}, {}, r"remove \[run\.sprt\]"),
        ({}, {"retired": True}, r"retired = true, which only a standing pool knows.*pool = true"),
        ({"pool": True}, {"retired": True}, r"at least two active policies; 1 of 2 are retired"),
    ],
)  # fmt: skip
def test_a_pool_is_checked_before_any_game(
    run: dict[str, Any], policy: dict[str, Any], message: str
) -> None:
    data = {**BASE, "run": {**BASE["run"], **run}}
    first = next(iter(BASE["policies"]))
    data["policies"] = {**BASE["policies"], first: {**BASE["policies"][first], **policy}}
    with pytest.raises(ConfigError, match=message):
        parse_config(data)


@pytest.mark.parametrize(
    ("prompt", "message"),
    [
        ("./mine.md", r"beside the config, which is given per family: write prompt = \{ board = \"./mine.md\" \}"),
        ("mine.md", r"names no family.*board/terse.md.*prompt = \{ board = \"./mine.md\" \}"),
    ],
)  # fmt: skip
def test_a_plain_template_string_must_name_a_family(prompt: str, message: str) -> None:
    data = {**BASE, "policies": {**BASE["policies"], "b": {"kind": "mock", "prompt": prompt}}}
    with pytest.raises(ConfigError, match=message):
        parse_config(data)


def test_a_template_beside_the_config_is_read_from_there(tmp_path: Path) -> None:
    import anyio

    from arena.league.plan import plan_run
    from arena.league.run import execute
    from arena.play.prompts import prompts_dir
    from arena.record.replay import load_replay

    mine = (prompts_dir() / "board" / "default.md").read_text() + "\nMINE\n"
    (tmp_path / "mine.md").write_text(mine)
    config = tmp_path / "run.toml"
    config.write_text(
        '[run]\nname = "beside"\nseed = 3\ngames = ["hex"]\n'
        '[policies.a]\nkind = "scripted"\n'
        '[policies.b]\nkind = "mock"\nprompt = { board = "./mine.md" }\n'
    )
    loaded = load_config(config)
    plan = plan_run(loaded, tmp_path / "out")
    assert plan.templates[("b", "board")].path == "./mine.md"
    anyio.run(execute, plan)
    replay = load_replay(next((tmp_path / "out" / "replays").glob("*.json")))
    assert "./mine.md" in replay.templates.values()  # the path as written
    prompt = next(
        a.prompt for g in replay.games for p in g.plies for d in p.decisions for a in d.attempts
    )
    assert prompt is not None
    assert "MINE" in prompt


def test_an_error_names_the_key_as_the_file_spells_it_and_echoes_a_bad_choice() -> None:
    data = {
        "run": {"name": "x", "games": ["connect-four"]},
        "policies": {
            "coach": {"kind": "llm", "provider": "opnai", "model": "m", "promt": "p.md"},
            "t": {"kind": "scripted", "baseline": "tactician"},
        },
    }
    with pytest.raises(ConfigError) as refused:
        parse_config(data)
    said = str(refused.value)
    assert "policies.coach.promt: unknown key 'promt'" in said
    assert "policies.coach.provider: Input should be 'openai', 'anthropic' or 'gemini'" in said
    assert "(it says 'opnai')" in said
    assert ".llm." not in said  # the union's tag is no key of the file
