"""Registration: the static check of a program file, and its identity (SHA-256).

The check parses the source with `ast` and refuses, naming the line and the
offending name: imports outside `policy.ALLOWED_MODULES`, the names of
`policy.FORBIDDEN_NAMES` (clocks, randomness, os, open, eval, ...), the
attributes of `policy.FORBIDDEN_ATTRIBUTES` (the usual ways out of a Python
namespace), and a missing top-level `create` function. It is a first gate,
not the sandbox: a determined program can hide a name from `ast`, and the
child runtime refuses the same things at run time.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass
from pathlib import Path

from arena.programs.limits import ALLOWED_MODULES, FORBIDDEN_ATTRIBUTES, FORBIDDEN_NAMES

__all__ = ["MAX_SOURCE_BYTES", "ProgramInfo", "ProgramRefused", "check_source", "register"]

MAX_SOURCE_BYTES = 1_000_000
_ATTRIBUTE_CALLS = ("getattr", "setattr", "delattr", "hasattr")


class ProgramRefused(Exception):
    """The arena will not register the program; `problems` lists every reason."""

    def __init__(self, reason: str, problems: list[str] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.problems = problems or [reason]


@dataclass(frozen=True, slots=True)
class ProgramInfo:
    """A registered program: its file, its identity and its source as checked."""

    path: Path
    sha256: str
    """SHA-256 of the file's bytes, recorded with every game it plays."""
    source: str
    plays_setup: bool
    """Whether it defines `choose_setup` (Stratego programs must)."""

    @property
    def name(self) -> str:
        """The file's stem, e.g. `greedy`."""
        return self.path.stem


class _Checker(ast.NodeVisitor):
    def __init__(self) -> None:
        self.problems: list[tuple[int, str]] = []

    def _refuse(self, node: ast.AST, message: str) -> None:
        self.problems.append((getattr(node, "lineno", 0), message))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self._refuse(node, "relative imports are refused: a program is one file")
        elif node.module is not None:
            self._check_module(node, node.module)
            for alias in node.names:
                self._check_name(node, alias.asname or alias.name)

    def _check_module(self, node: ast.AST, module: str) -> None:
        if module.partition(".")[0] not in ALLOWED_MODULES:
            allowed = ", ".join(sorted(ALLOWED_MODULES))
            self._refuse(node, f"import of {module!r} is refused (allowed: {allowed})")

    def _check_name(self, node: ast.AST, name: str) -> None:
        reason = FORBIDDEN_NAMES.get(name)
        if reason is not None:
            self._refuse(node, f"name {name!r} is refused: {reason}")

    def visit_Name(self, node: ast.Name) -> None:
        self._check_name(node, node.id)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._check_definition(node, node.name, node.args)
        self.generic_visit(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._check_definition(node, node.name, node.args)
        self.generic_visit(node)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._check_definition(node, "", node.args)
        self.generic_visit(node)

    def _check_definition(self, node: ast.AST, name: str, args: ast.arguments) -> None:
        self._check_name(node, name)
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        for arg in every:
            if arg is not None:
                self._check_name(node, arg.arg)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        reason = FORBIDDEN_ATTRIBUTES.get(node.attr)
        if reason is not None:
            self._refuse(node, f"attribute {node.attr!r} is refused: {reason}")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in _ATTRIBUTE_CALLS and len(node.args) >= 2:
            name = node.args[1]
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                reason = FORBIDDEN_ATTRIBUTES.get(name.value) or FORBIDDEN_NAMES.get(name.value)
                if reason is not None:
                    self._refuse(node, f"{func.id}(..., {name.value!r}) is refused: {reason}")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and node.value.startswith("__"):
            reason = FORBIDDEN_ATTRIBUTES.get(node.value) or FORBIDDEN_NAMES.get(node.value)
            if reason is not None:
                self._refuse(node, f"string {node.value!r} is refused: {reason}")


def check_source(text: str) -> list[str]:
    """Every problem the static check finds in a program's source, as `line N: ...`."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        return [f"line {exc.lineno or 0}: syntax error: {exc.msg}"]
    checker = _Checker()
    checker.visit(tree)
    problems = sorted(checker.problems)
    if not any(isinstance(node, ast.FunctionDef) and node.name == "create" for node in tree.body):
        problems.append((0, "no top-level function create(ctx): the arena calls it to start"))
    return [f"line {line}: {message}" if line else message for line, message in problems]


def _plays_setup(text: str) -> bool:
    tree = ast.parse(text)
    return any(
        isinstance(node, ast.FunctionDef) and node.name == "choose_setup" for node in ast.walk(tree)
    )


def register(path: str | Path) -> ProgramInfo:
    """Check the program file at `path` and return its identity; raise ProgramRefused."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ProgramRefused(f"cannot read program {str(path)!r}: {exc.strerror}") from exc
    if len(data) > MAX_SOURCE_BYTES:
        raise ProgramRefused(
            f"program {str(path)!r} has {len(data)} bytes: at most {MAX_SOURCE_BYTES} are accepted"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProgramRefused(f"program {str(path)!r} is not UTF-8: {exc.reason}") from exc
    problems = check_source(text)
    if problems:
        count = f"{len(problems)} problem{'s' if len(problems) > 1 else ''}"
        raise ProgramRefused(f"program {str(path)!r} refused, {count}: {problems[0]}", problems)
    return ProgramInfo(path, hashlib.sha256(data).hexdigest(), text, _plays_setup(text))
