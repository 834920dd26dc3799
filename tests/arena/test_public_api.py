"""Every arena module's `__all__` is exactly its public names (as `providers`' is)."""

from __future__ import annotations

import ast
import importlib
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted((ROOT / "arena").rglob("*.py"))


def _name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _defined(tree: ast.Module) -> set[str]:
    """The public names a module's own top level defines (not the ones it imports)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {n for n in names if not n.startswith("_") and n != "log"}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_all_is_the_public_names(path: Path) -> None:
    module = importlib.import_module(_name(path))
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if path.name == "__init__.py":  # a package: what it defines and re-exports, or nothing
        exported = set(getattr(module, "__all__", ()))
        reexported = {
            alias.asname or alias.name
            for node in tree.body
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("arena.")
            for alias in node.names
            if not isinstance(getattr(module, alias.asname or alias.name), types.ModuleType)
        }
        assert exported == _defined(tree) | reexported, _name(path)
        return
    assert hasattr(module, "__all__"), f"{_name(path)} has no __all__"
    assert set(module.__all__) == _defined(tree), _name(path)
    assert len(module.__all__) == len(set(module.__all__)), f"{_name(path)} lists a name twice"
