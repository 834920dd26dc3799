"""The orchestrator: config, seats, decisions, episodes, replays, league, CLI."""
