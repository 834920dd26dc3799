"""The package's `__all__` is exactly its public names, and the import rules hold."""

from __future__ import annotations

import ast
import types
from pathlib import Path

import providers


def test_all_matches_the_public_names() -> None:
    for name in providers.__all__:  # the HTTP stack's names resolve when first asked for
        getattr(providers, name)
    public = {
        name
        for name, value in vars(providers).items()
        if not name.startswith("_")
        and name not in {"annotations", "TYPE_CHECKING", "Any"}  # `from` imports, not exports
        and not isinstance(value, types.ModuleType)
    }
    assert set(providers.__all__) == public


def test_a_run_without_model_seats_never_imports_the_http_stack() -> None:
    import subprocess
    import sys

    code = (
        "import sys, providers, arena.seats.factory, arena.league.run; "
        "print(sorted(m for m in ('httpx', 'httpcore', 'tenacity') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


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
