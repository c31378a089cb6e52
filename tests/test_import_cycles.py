"""The import graph of `assistant` and `cache` has no cycles and points the agreed way.

Modules are discovered by walking the package folders, so new packages are covered without
editing this file. An edge is any `import` or `from ... import` at module level or inside a
function; imports under `if TYPE_CHECKING:` are not edges (they never run). A second check counts
them too: two modules that name each other's types are as tangled, even if only one import runs.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("assistant", "cache")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def discover() -> dict[str, Path]:
    """Every module under the packages, by dotted name."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[module_name(path)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _imports(tree: ast.AST, hints: bool = False):
    """Import nodes that run, skipping the bodies of `if TYPE_CHECKING:` unless `hints`."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        for child in ast.iter_child_nodes(node):
            if not hints and isinstance(child, ast.If) and _is_type_checking(child.test):
                stack.extend(child.orelse)
                continue
            stack.append(child)


def _base(name: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    parts = package.split(".")
    if node.level > 1:
        parts = parts[: len(parts) - node.level + 1]
    return ".".join(parts + ([node.module] if node.module else []))


def _owner(target: str, modules: dict[str, Path]) -> str | None:
    """The deepest known module that `target` names or lies inside."""
    while target and target not in modules:
        target = target.rpartition(".")[0]
    return target or None


def edges_of(name: str, path: Path, modules: dict[str, Path], hints: bool = False) -> set[str]:
    targets = set()
    for node in _imports(ast.parse(path.read_text(), filename=str(path)), hints):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            base = _base(name, path, node)
            # `from package import module` is an edge to the module, `from module import x` to
            # the module that holds x
            names = [f"{base}.{alias.name}" for alias in node.names]
            names = [n for n in names if n in modules] or [base]
        for target in names:
            owner = _owner(target, modules)
            if owner and owner != name:
                targets.add(owner)
    return targets


def import_graph(hints: bool = False) -> dict[str, set[str]]:
    modules = discover()
    return {name: edges_of(name, path, modules, hints) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_one_cycle(graph, set(c)) for c in components]


def _one_cycle(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest path from the component's first module back to itself, for the message."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(graph[node] & component):
                if nxt == start:
                    return paths[node] + [start]
                if nxt not in paths:
                    paths[nxt] = paths[node] + [nxt]
                    following.append(nxt)
        frontier = following
    return sorted(component)


def test_the_walk_finds_the_packages():
    graph = import_graph()
    assert {"assistant.cli", "assistant.tui.app", "cache.db"} <= graph.keys()
    assert "assistant.cli.output" in graph["assistant.cli.commands"]  # `from ...output import`
    assert "assistant.tui.app" in graph["assistant.cli.commands"]  # imported inside a function


def test_no_import_cycles():
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join(" → ".join(c) for c in found)


def test_no_import_cycles_through_type_hints():
    found = cycles(import_graph(hints=True))
    assert not found, "import cycles (with TYPE_CHECKING imports):\n" + "\n".join(
        " → ".join(c) for c in found
    )


def test_cache_imports_nothing_of_assistant():
    graph = import_graph()
    bad = sorted(
        f"{name} → {target}"
        for name, targets in graph.items()
        if name.split(".")[0] == "cache"
        for target in targets
        if target.split(".")[0] == "assistant"
    )
    assert not bad, bad


def test_only_commands_imports_the_tui():
    graph = import_graph()
    bad = sorted(
        f"{name} → {target}"
        for name, targets in graph.items()
        if not _in_tui(name) and name != "assistant.cli.commands"
        for target in targets
        if _in_tui(target)
    )
    assert not bad, bad


def _in_tui(name: str) -> bool:
    return name == "assistant.tui" or name.startswith("assistant.tui.")


def test_a_cycle_is_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c", "a"]]


def test_relative_and_function_imports_are_edges_type_checking_ones_not(tmp_path):
    source = (
        "from typing import TYPE_CHECKING\n"
        "from .. import a\n"
        "from .c import thing\n"
        "if TYPE_CHECKING:\n"
        "    from pkg import d\n"
        "def f():\n"
        "    import pkg.e\n"
    )
    (tmp_path / "b.py").write_text(source)
    names = ("pkg", "pkg.a", "pkg.d", "pkg.e", "pkg.sub", "pkg.sub.b", "pkg.sub.c")
    modules = {name: tmp_path / "unused.py" for name in names}
    edges = edges_of("pkg.sub.b", tmp_path / "b.py", modules)
    assert edges == {"pkg.a", "pkg.sub.c", "pkg.e"}
    with_hints = edges_of("pkg.sub.b", tmp_path / "b.py", modules, hints=True)
    assert with_hints == edges | {"pkg.d"}
