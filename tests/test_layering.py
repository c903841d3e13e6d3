"""Layering of the source tree, read with `ast` alone (nothing here imports aesenv):

- aesenv is the library: no module under aesenv/ imports the applications built on it
  (`policies`, `benchmarks`, `train`), at module level or inside a function. A module name in a
  string (`importlib.import_module("benchmarks.x")`) is not an import statement and is not counted.
- aesenv's own modules import each other without cycles. An edge goes to the exact module named
  (`from a.b import c`: to `a.b.c` when that is a module, else to `a.b`), with no implicit edge to
  parent packages; function-level imports count, imports under `if TYPE_CHECKING:` do not.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = "aesenv"
APPLICATIONS = ("policies", "benchmarks", "train")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_modules(root: Path, package: str = LIBRARY) -> dict[str, Path]:
    """Every module of `package` under `root`, by dotted name."""
    return {module_name(path, root): path for path in sorted((root / package).rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement under `node`, at any depth, except the body of `if TYPE_CHECKING:`."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:
                if isinstance(other, (ast.Import, ast.ImportFrom)):
                    yield other
                else:
                    yield from _import_nodes(other)
        else:
            yield from _import_nodes(child)


def imports(path: Path, name: str, modules: set[str] | dict[str, Path]) -> Iterator[tuple[int, str, str]]:
    """(line, statement as written, module imported) for each module an import statement in `path` names.

    `name` is the importing module's dotted name (relative imports resolve against it); for
    `from a.b import c` the target is `a.b.c` when that is one of `modules`, else `a.b`."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in _import_nodes(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, f"import {alias.name}", alias.name
            continue
        if node.level:
            anchor = package.split(".") if package else []
            anchor = anchor[:len(anchor) - (node.level - 1)] if node.level > 1 else anchor
            base = ".".join([*anchor, *([node.module] if node.module else [])])
        else:
            base = node.module or ""
        written = f"from {'.' * node.level}{node.module or ''} import {', '.join(a.name for a in node.names)}"
        for alias in node.names:
            candidate = f"{base}.{alias.name}" if base else alias.name
            yield node.lineno, written, candidate if candidate in modules else base


def application_imports(root: Path, package: str = LIBRARY, applications=APPLICATIONS) -> list[str]:
    """`file:line: statement` for each import from `package` into one of `applications`."""
    modules = source_modules(root, package)
    found = []
    for name, path in modules.items():
        seen = set()
        for line, written, target in imports(path, name, modules):
            if target.split(".")[0] in applications and (line, written) not in seen:
                seen.add((line, written))
                found.append(f"{path.relative_to(root).as_posix()}:{line}: {written}")
    return found


def import_graph(root: Path, package: str = LIBRARY) -> dict[str, set[str]]:
    """module -> the package's own modules it imports (self-imports left out)."""
    modules = source_modules(root, package)
    return {name: {t for _, _, t in imports(path, name, modules) if t in modules and t != name}
            for name, path in modules.items()}


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative), each sorted, in a stable order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph.get(successor, ())))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return sorted(components)


def _shortest_cycle(graph: dict[str, set[str]], start: str, within: set[str]) -> list[str]:
    """start -> ... -> start, by breadth-first search inside one component."""
    parent: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for successor in sorted(graph[node] & within):
                if successor == start:
                    chain = [node]
                    while chain[-1] != start:
                        chain.append(parent[chain[-1]])
                    return [*reversed(chain), start]
                if successor not in parent:
                    parent[successor] = node
                    following.append(successor)
        frontier = following
    return []


def import_cycles(graph: dict[str, set[str]]) -> list[str]:
    """Each distinct shortest cycle through each module of each cyclic component, as `a -> b -> a`."""
    cycles: list[str] = []
    for component in strongly_connected(graph):
        if len(component) < 2:
            continue
        seen: set[tuple[str, ...]] = set()
        for member in component:
            chain = _shortest_cycle(graph, member, set(component))
            ring = chain[:-1]
            turn = ring.index(min(ring))
            key = tuple(ring[turn:] + ring[:turn])
            if key not in seen:
                seen.add(key)
                cycles.append(" -> ".join([*key, key[0]]))
    return cycles


def test_aesenv_does_not_import_the_applications_built_on_it():
    found = application_imports(ROOT)
    assert not found, f"aesenv imports from {'/'.join(APPLICATIONS)}:\n" + "\n".join(found)


def test_aesenv_has_no_import_cycles():
    cycles = import_cycles(import_graph(ROOT))
    assert not cycles, "import cycles among aesenv's modules:\n" + "\n".join(cycles)


def test_the_checker_finds_a_cycle_and_an_application_import(tmp_path):
    files = {
        "lib/__init__.py": "from lib.a import f\n",
        "lib/a.py": "from . import b\n\ndef f():\n    from policies.x import y\n",
        "lib/b.py": "import lib.c\n",
        "lib/c.py": "def g():\n    from .a import f\n",
        "lib/d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from lib.e import E\n"
                    "    import train\nimport importlib\nimportlib.import_module('benchmarks.z')\n",
        "lib/e.py": "from lib.d import thing\n",
        "lib/sub/__init__.py": "from .. import a\nfrom ..sub.leaf import h\n",
        "lib/sub/leaf.py": "import benchmarks\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)

    assert application_imports(tmp_path, "lib") == ["lib/a.py:4: from policies.x import y",
                                                    "lib/sub/leaf.py:1: import benchmarks"]
    graph = import_graph(tmp_path, "lib")
    assert graph["lib"] == {"lib.a"}  # no implicit edge to parent packages, none from children to them
    assert graph["lib.sub"] == {"lib.a", "lib.sub.leaf"}  # relative imports resolved
    assert graph["lib.d"] == set()  # type-only imports and strings are not edges
    assert import_cycles(graph) == ["lib.a -> lib.b -> lib.c -> lib.a"]
