"""The package's `__all__` is exactly its public names, and the import rules hold."""

from __future__ import annotations

import ast
import types
from pathlib import Path

import providers


def test_all_matches_the_public_names() -> None:
    public = {
        name
        for name, value in vars(providers).items()
        if not name.startswith("_")
        and name != "annotations"  # the `from __future__` feature, not an export
        and not isinstance(value, types.ModuleType)
    }
    assert set(providers.__all__) == public


def test_providers_imports_neither_arena_nor_games() -> None:
    root = Path(providers.__file__).parent
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for name in names:
                assert name.split(".")[0] not in {"arena", "games"}, f"{path.name} imports {name}"
