"""The orchestrator: the story of a league, one sub-package a chapter.

    config     the run config: TOML in, validated models out, before any game; the
               one table of what each setting does (plays, counts, connects, runs)
    league/    the schedule, the plan (a value), the run (the session's start,
               workers and the one writer), the SQLite store, endpoint health, the
               summary, the stop rules, what a resume takes, a standing pool's rules
    results/   what the games mean: standings, ratings, the league's tables,
               reports and exports (a report is handed the store it reads)
    cluster/   where the run's episodes are played: this process, or a Ray
               cluster's workers (the executor seam, the worker and its messages)
    play/      a match and its episodes, the game loop, one decision (deadlines,
               the one retry, fallbacks), reading replies, prompts; the loop hands
               each decision what its prompt is rendered from (`SeatPrompt`) and is
               never called back; the garbage collector tuned while a run plays
    seats/     what sits in a seat, made by the session's one `SeatMaker`: scripted
               baselines, models, the mock, programs, a person (at a table of the
               run's desk, given its episode's scope by the maker)
    authors/   models as authors: a program written from a common brief, beside
               its manifest, which makes it an entrant (`arena author`)
    programs/  the sandbox program seats run in, and `arena program check`
    record/    replays, the ledger, backgammon cards, the episode hooks, verify,
               the audit of a run folder (handed the store it checks against);
               every fallback cause, its side and its wording (causes)
    viewer/    the static replay viewer and its server; the live play page
    mock_llm/  a local server speaking the three wire protocols, with faults
    observe/   watching a run from outside: metrics, traces and the live page, fed
               its events, never writing what it keeps
    logs       structlog, configured once (a cluster's workers too)
    redact     the run's secrets out of everything it writes
    asgi       what the viewer's and the mock's servers share: bodies, responses,
               uvicorn on a bound port with bounded start and stop
    cli/       the `arena` command: one module per subcommand (its arguments and
               handler), the run's console and progress

Imports point one way: cli -> observe -> viewer, mock_llm -> league -> results -> cluster
-> authors -> seats -> programs -> play -> record -> config, logs -> redact, asgi (a
test holds the direction).
"""
