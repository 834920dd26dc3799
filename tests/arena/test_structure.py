"""Guards that keep the code readable as it grows: no import cycle in `arena/` or
`providers/`, no module or function too long to read in one sitting, and no formatter
escape but for the few tables laid out by hand.

Size is counted in statements, not lines, so that the formatter cannot hide it: every
`ast.stmt` node counts one (a `def`, an `if`, each statement in its branches, an
assignment, a docstring, an import). A module counts every statement in it, at any depth.
A function counts the statements of its own body at any depth, but a function or class
defined inside it counts one (its `def` line) and is measured as a function of its own: a
nested helper is read on its own, so it is capped on its own. The caps, measured when they
were set (the largest module 327 statements, the largest function 47, the old 500-line
modules 250-300):

- `MAX_MODULE_STATEMENTS` = 300 a module in `arena/` and `providers/`;
- `MAX_FUNCTION_STATEMENTS` = 50 a function or method there;

with the exceptions in `LARGE`, each naming why it stays whole."""

from __future__ import annotations

import ast
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("arena", "providers")
FORMATTED = ("arena", "providers", "games")
MAX_MODULE_STATEMENTS = 300
MAX_FUNCTION_STATEMENTS = 50
LARGE: dict[str, str] = {
    "arena/programs/child.py": "the sandbox runs this one file by its path with the standard "
    "library only, so it cannot be split into modules it would import",
}
"""Modules (by path) and functions (by `path::qualname`) allowed over their cap, and why."""
MAX_FORMAT_ESCAPES = 10


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The known modules `name` imports: every `import` and `from` statement at any depth,
    those in functions and under `if TYPE_CHECKING:` included. `from package import name`
    is an edge to the submodule `package.name` where there is one, else to the package."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                targets.add(sub if sub in known else base)
    edges = set()
    for target in targets:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            edges.add(target)
    return edges


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_sees_a_cycle_and_nothing_else() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_no_import_cycle() -> None:
    known = _modules()
    graph = {name: _imported(name, path, known) for name, path in known.items()}
    assert sum(map(len, graph.values())) > 100  # the graph is really read
    assert _cycles(graph) == []


def _statements(node: ast.AST) -> int:
    """The statements under `node`; a nested function or class counts one, not its body."""
    count = 0
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.stmt):
            count += 1
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
        count += _statements(child)
    return count


def _sizes(source: str, path: str) -> tuple[int, dict[str, int]]:
    """A module's statement count (all of them, at any depth) and each function's (by
    `path::qualname`, nested bodies counted apart)."""
    tree = ast.parse(source)
    functions: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                functions[f"{path}::{name}"] = _statements(child)
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return sum(isinstance(n, ast.stmt) for n in ast.walk(tree)), functions


def test_statements_are_counted_as_the_docstring_says() -> None:
    source = (
        "import os\n"  # 1
        "class A:\n"  # 2
        "    def f(self, x):\n"  # 3
        "        if x:\n"  # 4 (f: 1)
        "            y = 1\n"  # 5 (f: 2)
        "        else:\n"
        "            y = 2\n"  # 6 (f: 3)
        "        def g():\n"  # 7 (f: 4; g is counted apart)
        "            return y\n"  # 8 (g: 1)
        "        return g\n"  # 9 (f: 5)
    )
    assert _sizes(source, "m.py") == (9, {"m.py::A.f": 5, "m.py::A.f.g": 1})


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_or_function_over_its_statement_cap(package: str) -> None:
    modules: dict[str, int] = {}
    functions: dict[str, int] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        name = str(path.relative_to(ROOT))
        modules[name], found = _sizes(path.read_text(encoding="utf-8"), name)
        functions.update(found)
    assert max(functions.values()) > 20  # the functions are really measured
    long = {n: c for n, c in modules.items() if c > MAX_MODULE_STATEMENTS and n not in LARGE}
    assert long == {}, (
        f"modules over {MAX_MODULE_STATEMENTS} statements: {long}; split them by concern "
        "(a module a job), or, if one must stay whole, add it to LARGE with the reason"
    )
    big = {n: c for n, c in functions.items() if c > MAX_FUNCTION_STATEMENTS and n not in LARGE}
    assert big == {}, (
        f"functions over {MAX_FUNCTION_STATEMENTS} statements: {big}; split them into named "
        "steps, or, if one must stay whole, add it to LARGE with the reason"
    )
    stale = {n for n in LARGE if n.startswith(f"{package}/") and n not in modules | functions}
    assert stale == set(), f"LARGE names what is gone: {stale}; delete those entries"


def _format_escapes(path: Path) -> list[tuple[int, str, str]]:
    """Each `# fmt: skip` or `# fmt: off` comment of a file: its line, its kind and its
    reason (the comment after `# fmt: skip` on its line, or for `# fmt: off`, which ruff
    wants alone, the comment line right above it; "" if none)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    with path.open("rb") as source:
        comments = [
            (token.start[0], token.string)
            for token in tokenize.tokenize(source.readline)
            if token.type == tokenize.COMMENT
        ]
    found = []
    for line, text in comments:
        body = text.lstrip("#").strip()
        if body.startswith("fmt: skip"):
            reason = body.removeprefix("fmt: skip").strip().lstrip("#").strip()
            found.append((line, "skip", reason))
        elif body == "fmt: off":
            above = lines[line - 2].strip() if line > 1 else ""
            found.append((line, "off", above.lstrip("#").strip() if above.startswith("#") else ""))
    return found


def test_the_escape_reader_finds_markers_and_their_reasons(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(
        "A = (\n    1, 2,\n)  # fmt: skip  # one row per rank\n"
        'B = "# fmt: skip"  # fmt: skip\n'
        "# laid out by hand\n# fmt: off\nC = 1\n# fmt: on\n"
        "x = 1\n# fmt: off\nD = 1\n# fmt: on\n",
        encoding="utf-8",
    )
    assert _format_escapes(path) == [
        (3, "skip", "one row per rank"),
        (4, "skip", ""),
        (6, "off", "laid out by hand"),
        (10, "off", ""),
    ]


def test_the_formatter_is_escaped_for_hand_laid_tables_only() -> None:
    kept: dict[str, str] = {}
    for package in FORMATTED:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = str(path.relative_to(ROOT))
            for line, _, reason in _format_escapes(path):
                kept[f"{name}:{line}"] = reason
    assert "arena/config/settings.py:" in " ".join(kept)  # the markers are really read
    bare = sorted(where for where, reason in kept.items() if len(reason) < 10)
    assert bare == [], (
        f"formatter escapes without a reason: {bare}; delete the marker and run `ruff format`, "
        "or, for a table laid out by hand, say so: `)  # fmt: skip  # a table ...: one row "
        "per ...` (for `# fmt: off`, the comment line above it)"
    )
    assert len(kept) <= MAX_FORMAT_ESCAPES, (
        f"{len(kept)} formatter escapes, at most {MAX_FORMAT_ESCAPES}: {sorted(kept)}; let "
        "`ruff format` lay out all but the few tables that read better by hand"
    )


def test_the_league_room_holds_what_runs_a_league_only() -> None:
    # schedule, plan, run, store (and its rebuild), lock, preflight, health, backlog,
    # summary, the stopping rules (stopping, sprt, adaptive), a standing pool's rules
    # (pool) and __init__: results, the cluster and the command line have rooms of their own
    modules = sorted(p.stem for p in (ROOT / "arena" / "league").glob("*.py"))
    assert len(modules) <= 16, f"arena/league/ holds {len(modules)} modules: {modules}"
