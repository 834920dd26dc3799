"""Registration: the static check of a program file, and its identity (SHA-256).

The check parses the source with `ast` and refuses, naming the line and the
offending name: imports outside `policy.ALLOWED_MODULES`, the names of
`policy.FORBIDDEN_NAMES` (clocks, randomness, os, open, eval, ...), the
attributes of `policy.FORBIDDEN_ATTRIBUTES` (the usual ways out of a Python
namespace), the same names built by joining strings (`"__glo" + "bals__"`), a
computed attribute name with a dunder's underscores at either end given to
`getattr` and its kin, and a missing top-level `create` function. It is a first
gate, not the sandbox: a determined program can hide a name from `ast`, and the
child runtime refuses the same things at run time (and the operating system, past it).
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
    trusted: bool = True
    """Whether `[run] sandbox = "auto"` may run it outside bwrap (`admission.is_trusted`)."""

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
        if isinstance(node.func, ast.Attribute) and node.func.attr == "join":
            self._check_joined(node)
        func = node.func
        if isinstance(func, ast.Name) and func.id in _ATTRIBUTE_CALLS and len(node.args) >= 2:
            name = node.args[1]
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                if reason := _forbidden(name.value):
                    self._refuse(node, f"{func.id}(..., {name.value!r}) is refused: {reason}")
            else:
                self._check_computed(node, func.id, name)
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if not self._check_joined(node):
            self.generic_visit(node)

    def _check_joined(self, node: ast.expr) -> bool:
        """Refuse a forbidden name built by joining literals; whether `node` is such a join."""
        joined = _joined(node)
        if joined is None:
            return False
        if reason := _forbidden(joined):
            self._refuse(node, f"string {joined!r}, built by joining, is refused: {reason}")
        return True

    def _check_computed(self, node: ast.Call, call: str, name: ast.expr) -> None:
        """A name `getattr` and its kin get from an expression, not a literal: refused where
        the pieces it is made of show a dunder's underscores at either end."""
        joined = _joined(name)
        if joined is not None and _forbidden(joined):
            return  # refused as the join it is
        pieces = _string_pieces(name)
        if pieces and (pieces[0].startswith("__") or pieces[-1].endswith("__")):
            self._refuse(
                node,
                f"{call}(..., <a computed name from {' ... '.join(map(repr, pieces))}>) is "
                "refused: a program names attributes plainly, never a dunder built at run time",
            )

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and node.value.startswith("__"):
            reason = FORBIDDEN_ATTRIBUTES.get(node.value) or FORBIDDEN_NAMES.get(node.value)
            if reason is not None:
                self._refuse(node, f"string {node.value!r} is refused: {reason}")


def _forbidden(name: str) -> str | None:
    """Why `name` is refused as an attribute or a name, or None."""
    return FORBIDDEN_ATTRIBUTES.get(name) or FORBIDDEN_NAMES.get(name)


def _joined(node: ast.expr) -> str | None:
    """The string an expression of string literals joined by `+` (or `"".join` of a list
    or tuple of them) makes, or None for anything else."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _joined(node.left), _joined(node.right)
        return left + right if left is not None and right is not None else None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "join"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.List | ast.Tuple)
    ):
        glue, parts = _joined(node.func.value), [_joined(e) for e in node.args[0].elts]
        if glue is not None and all(p is not None for p in parts):
            return glue.join(p for p in parts if p is not None)
    return None


def _string_pieces(node: ast.expr) -> list[str]:
    """The string literals at the ends of an expression joined by `+` or an f-string, in
    order (its first and last show how the name it makes begins and ends); [] if neither
    end is a literal."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [*_string_pieces(node.left), *_string_pieces(node.right)]
    if isinstance(node, ast.JoinedStr):
        return [p for v in node.values for p in _string_pieces(v)]
    joined = _joined(node)
    return [joined] if joined else []


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
