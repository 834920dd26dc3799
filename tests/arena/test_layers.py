"""Imports inside arena/ point one way, down the story (see `arena/__init__.py`)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

LAYERS: tuple[tuple[str, ...], ...] = (
    ("arena.redact", "arena.asgi"),
    ("arena.logs", "arena.config"),
    ("arena.record",),
    ("arena.play",),
    ("arena.programs",),
    ("arena.seats",),
    ("arena.authors",),
    ("arena.cluster",),
    ("arena.results",),
    ("arena.league",),
    ("arena.viewer", "arena.mock_llm"),
    ("arena.observe",),
    ("arena.cli",),
)
"""Bottom first: a unit may import its own modules and any unit of a lower layer."""

RANK = {unit: rank for rank, units in enumerate(LAYERS) for unit in units}


def _unit(module: str) -> str:
    """`arena.play.decisions` -> `arena.play`; `arena.config` -> `arena.config`."""
    return ".".join(module.split(".")[:2])


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _arena_imports(path: Path) -> set[str]:
    """Every arena module `path` imports, at the top, inside functions or for type checking."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("arena"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "arena":
                found.update(f"arena.{a.name}" for a in node.names)
            elif node.module.startswith("arena."):
                found.add(node.module)
    return found


def _violations(path: Path) -> list[str]:
    unit = _unit(_module_name(path))
    bad = []
    for target in sorted(_arena_imports(path)):
        other = _unit(target)
        if other == unit:
            continue
        if other not in RANK:
            bad.append(f"{target} (a unit the layers do not list)")
        elif RANK[other] >= RANK[unit]:
            bad.append(target)
    return bad


SOURCES = sorted((ROOT / "arena").rglob("*.py"))


def test_every_unit_has_a_layer() -> None:
    units = {_unit(_module_name(p)) for p in SOURCES} - {"arena"}
    assert units == set(RANK), "add the new unit to LAYERS (and to arena/__init__.py's story)"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_point_down(path: Path) -> None:
    assert not _violations(path), f"{path.relative_to(ROOT)} imports upward: {_violations(path)}"


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    fake = ROOT / "arena" / "config.py"
    source = "from arena.seats.mock import MockSeat\n"
    sample = tmp_path / "sample.py"
    sample.write_text(source)
    assert _arena_imports(sample) == {"arena.seats.mock"}
    assert _unit(_module_name(fake)) == "arena.config"
    assert RANK["arena.seats"] > RANK["arena.config"]
