"""Golden replays: the shipped configs, played through `arena run`, give the same replays.

Each config is played in a subprocess, as a user runs it, into a fresh folder;
every replay is reduced to a digest of its JSON with the timings masked
(`latency_s`, `wall_s`, `wait_s`: wall-clock measurements that differ from run
to run) and compared with `digests.json`. A change that alters prompts or
replays on purpose regenerates the digests and says so in its commit:

    python -m tests.golden

Two configs are adjusted for the test, by text, so that a run is reproducible
and quick: backgammon plays `dice = "derived"` (card seeds from the master seed,
not drawn at random), and programs plays `matches = 1` (the k-th match's seeds do
not depend on how many matches follow, so these replays are exactly the first
match of every pair of the shipped config). As the copy is played from a temporary
folder, its program paths (relative to the config's folder) are made absolute.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from arena.record.replay import results_digest

ROOT = Path(__file__).resolve().parents[2]
DIGESTS = Path(__file__).with_name("digests.json")

ADJUSTMENTS: dict[str, list[tuple[str, str]]] = {
    "quickstart": [],
    "battle": [],
    "stratego": [],
    "backgammon": [('dice = "verifiable"', 'dice = "derived"')],
    "programs": [("matches = 2 ", "matches = 1 "), ('path = "../', f'path = "{ROOT}/')],
}
"""Config name -> text replacements made to `configs/<name>.toml` for the test."""


def replay_digest(path: Path) -> str:
    """The SHA-256 of a replay's canonical JSON (sorted keys), timings masked."""
    return results_digest(path.read_text(encoding="utf-8"))


def _config_text(name: str) -> str:
    text = (ROOT / "configs" / f"{name}.toml").read_text(encoding="utf-8")
    for old, new in ADJUSTMENTS[name]:
        if old not in text:
            raise RuntimeError(f"configs/{name}.toml no longer holds {old!r}: update ADJUSTMENTS")
        text = text.replace(old, new)
    return text


def play(name: str, folder: Path) -> dict[str, str]:
    """Play config `name` with `arena run` into `folder`; episode -> replay digest."""
    config = folder / f"{name}.toml"
    config.write_text(_config_text(name), encoding="utf-8")
    out = folder / name
    command = [sys.executable, "-m", "arena.cli", "run", str(config), "--out", str(out)]
    done = subprocess.run(
        [*command, "--no-progress"], cwd=ROOT, capture_output=True, text=True, timeout=900,
        env={**os.environ, "COLUMNS": "160"},
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"arena run {name} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return {p.stem: replay_digest(p) for p in sorted((out / "replays").glob("*.json"))}


def play_all(folder: Path) -> dict[str, dict[str, str]]:
    """Every config of `ADJUSTMENTS`, played at once (each run is its own process)."""
    with ThreadPoolExecutor(len(ADJUSTMENTS)) as pool:
        runs = {name: pool.submit(play, name, folder) for name in ADJUSTMENTS}
        return {name: run.result() for name, run in runs.items()}


def regenerate() -> None:
    """Play every config and write `digests.json`."""
    with tempfile.TemporaryDirectory(prefix="cog-golden-") as folder:
        digests = play_all(Path(folder))
    DIGESTS.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(
        f"wrote {DIGESTS.relative_to(ROOT)}: "
        + ", ".join(f"{n} {len(d)}" for n, d in digests.items())
    )
