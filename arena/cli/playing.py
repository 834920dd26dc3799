"""A run's plan played under its console: its progress shown as episodes finish, with the
mock LLM served around it for --mock-llm (and every llm policy pointed at it), and the play
page served while people have seats."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING

from arena.cli.console import ProgressLines, Stderr, progress_bar

if TYPE_CHECKING:
    from arena.config import Config
    from arena.league.plan import RunPlan
    from arena.league.summary import RunResult
    from arena.seats.desk import Desk

__all__ = ["model_names", "play_with_progress", "served_by_mock"]


def served_by_mock(config: Config, mock_url: str) -> Config:
    """`config` with every llm policy asking the mock at `mock_url`: each base_url keeps its
    path (`/v1`), or takes the protocol's default path; replicas become the one mock."""
    from urllib.parse import (  # loaded when this subcommand runs: `import arena.cli` loads no arena module
        urlsplit,
        urlunsplit,
    )

    import providers
    from arena.config import LlmPolicy, PolicyConfig

    mock = urlsplit(mock_url)
    policies: dict[str, PolicyConfig] = {}
    for name, policy in config.policies.items():
        if isinstance(policy, LlmPolicy):
            default = providers.DEFAULT_BASE_URLS[policy.provider]
            urls = [
                urlunsplit(
                    urlsplit(url or default)._replace(scheme=mock.scheme, netloc=mock.netloc)
                )
                for url in policy.base_urls
            ]
            unique = list(dict.fromkeys(urls))
            policy = policy.model_copy(
                update={"base_url": unique[0] if len(unique) == 1 else unique}
            )
        policies[name] = policy
    return config.model_copy(update={"policies": policies})


def model_names(config: Config) -> list[str]:
    """The models `config`'s llm policies ask for, which a mock standing in for them lists."""
    from arena.config import LlmPolicy

    return sorted({p.model for p in config.policies.values() if isinstance(p, LlmPolicy)})


def play_with_progress(
    plan: RunPlan,
    console: Stderr,
    *,
    show: bool,
    mock: tuple[int, str] | None,
    grace_s: float,
    check: bool,
    ray_address: str | None,
    play_port: int = 0,
    said: tuple[str, ...] = (),
    json_lines: bool = False,
) -> RunResult:
    """Every episode of `plan` played (`arena.league.run.execute`), with the live bar when
    `show` and plain progress lines without it; `mock`: the (port, faults) of a mock LLM to
    serve meanwhile; `play_port`: where the play page listens when people have seats;
    `said`: lines to show with the servers' (where the run is watched). With `json_lines`,
    what the console would say is logged as events instead (`--log-format json`)."""
    import anyio  # loaded when this subcommand runs: `import arena.cli` loads no arena module

    from arena.league.run import execute

    episodes = plan.episode_count()
    with progress_bar(console, show, plan.config.run.name, episodes) as move:
        lines = ProgressLines(console, plan.config.run.name, json_lines=json_lines)
        say = _saying(console, json_lines)

        def on_episode(result: RunResult) -> None:
            if lines.starting and result.finished_before and plan.pool:
                say(
                    f"{plan.config.run.name}, a standing pool in {plan.out}, session {plan.session}: the "
                    f"{result.finished_before} episodes of earlier sessions are kept and rated; "
                    "new entrants play their placement first",
                    "pool_resuming",
                    session=plan.session,
                    finished_before=result.finished_before,
                )
            elif lines.starting and result.finished_before:
                say(
                    f"resuming {plan.config.run.name} in {plan.out}: {result.finished_before} of "
                    f"{result.episodes} episodes were finished earlier and are kept; the rest are "
                    "played now (--force-new starts over)",
                    "run_resuming",
                    finished_before=result.finished_before,
                    episodes=result.episodes,
                )
            lines.starting = False
            move(
                completed=result.played + result.skipped + len(result.failed),
                total=episodes + result.replays,
                in_flight=result.in_flight,
                fallbacks=result.fallbacks_before + result.fallbacks,
            )
            if not show:
                lines.maybe(result, episodes + result.replays)

        async def play() -> RunResult:
            # Both servers up before either is announced: a busy port of either is the one
            # message, never after a URL printed for someone to open.
            lines_said: list[tuple[str, str, dict[str, object]]] = [
                (line, "run_watched", {"detail": line}) for line in said
            ]
            async with AsyncExitStack() as servers:
                if mock is not None:
                    from arena.mock_llm import build_app, serving  # only a run that serves it

                    port, faults = mock
                    app = build_app(faults=faults, models=model_names(plan.config))
                    url = await servers.enter_async_context(
                        serving(app, port=port, flag="--mock-port")
                    )
                    lines_said.append(
                        (
                            f"mock LLM serving on {url} (faults: {faults or 'none'})",
                            "mock_llm_serving",
                            {"url": url, "faults": faults or "none"},
                        )
                    )
                desk: Desk | None = None
                if plan.people:
                    from arena.viewer.play import play_page  # uvicorn and the page: with people

                    page = await servers.enter_async_context(
                        play_page(plan.config.run.name, play_port)
                    )
                    lines_said.append(
                        (
                            f"play page: open {page.url} in your browser to play "
                            f"{', '.join(plan.people)} (its token lets only you in)",
                            "play_page_serving",
                            {"url": page.url, "people": list(plan.people)},
                        )
                    )
                    desk = page.desk
                for line, event, fields in lines_said:
                    say(line, event, **fields)
                async with anyio.create_task_group() as ticking:
                    if not show:
                        ticking.start_soon(tick)
                    result = await execute(
                        plan,
                        on_episode=on_episode,
                        grace_s=grace_s,
                        handle_signals=True,
                        check_endpoints=check,
                        ray_address=ray_address,
                        desk=desk,
                    )
                    ticking.cancel_scope.cancel()
                on_episode(result)  # the end (a resume that had nothing left to play too)
                return result

        async def tick() -> None:  # a line every EVERY_S, even while no episode ends
            while True:
                await anyio.sleep(lines.TICK_S)
                lines.tick()

        return anyio.run(play)


def _saying(console: Stderr, json_lines: bool) -> Callable[..., None]:
    """How the run tells the operator something: a line on the console, or with
    `json_lines` the event (its name and fields) that says it."""
    if json_lines:
        import structlog

        log = structlog.get_logger("arena.cli.run")
        return lambda line, event, **fields: log.info(event, **fields)
    return lambda line, event, **fields: console.print(
        line, highlight=False, markup=False, soft_wrap=True
    )
