"""Layering of the source tree, read with `ast` (only the last tests import aesenv, each in a
fresh interpreter):

- aesenv is the library: no module under aesenv/ imports the applications built on it
  (`policies`, `benchmarks`, `train`), at module level or inside a function. A module name in a
  string (`importlib.import_module("benchmarks.x")`) is not an import statement and is not counted.
- aesenv's own modules import each other without cycles and never upwards (`LAYERS`). An edge goes
  to the exact module named (`from a.b import c`: to `a.b.c` when that is a module, else to `a.b`)
  and, as Python runs them first, to that module's parent packages, except the importer's own
  (already running) and those whose `__init__` imports nothing of the package (running them
  loads nothing). Function-level imports count, and so do imports under
  `if TYPE_CHECKING:`: a type a module names is a dependency a reader follows.
- aesenv's folders (a package directly under aesenv, or a top-level module) import each other
  without cycles, by the same import graph (`folder_graph`): a module two folders share lives
  below both (the wire models a served env and its client read are `aesenv.wire`).
- `import aesenv` and `import aesenv.render` load no kind, and `import aesenv` none of
  Playwright, torch or the OpenAI SDK: kinds are registered by entry point and loaded on first use;
  `gym.make("AesWeb-v0")` loads the web kind only (a pipeline builds a kind's parts on its first task).
"""

from __future__ import annotations

import ast
import subprocess
import sys
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


# aesenv's layers, lowest first: a module may import its own layer and those below, never above.
# A prefix names a module and everything under it; the longest matching prefix decides.
LAYERS: tuple[tuple[str, ...], ...] = (
    # foundation: data types and small utilities
    ("aesenv.version", "aesenv.paths", "aesenv.jsonl", "aesenv.text", "aesenv.colour", "aesenv.memo",
     "aesenv.quoting", "aesenv.procfs", "aesenv.registry", "aesenv.specs", "aesenv.sysdeps", "aesenv.artifact",
     "aesenv.tasks", "aesenv.models", "aesenv.stages"),
    # machinery with no notion of a reward: sandboxes, the browser, the linter, model clients, node tools
    ("aesenv.sandbox", "aesenv.render", "aesenv.lint", "aesenv.llm", "aesenv.node"),
    # the channel contract and the registry of what makes channel results one reward
    ("aesenv.channels", "aesenv.aggregators"),
    # what several kinds share: rubric judging, the page agents
    ("aesenv.judging", "aesenv.interact"),
    # the kinds' registry and contract, then the kinds (a project's pages are judged as pages)
    ("aesenv.kinds.envs",),
    ("aesenv.kinds.base",),
    ("aesenv.kinds.page",),
    ("aesenv.kinds.web", "aesenv.kinds.plot"),
    ("aesenv.kinds.project",),
    ("aesenv.kinds",),
    # scoring: one pipeline over every kind
    ("aesenv.rewards",),
    # episodes and runs over the pipeline
    ("aesenv.policy", "aesenv.context", "aesenv.report", "aesenv.loop", "aesenv.wire"),
    ("aesenv.envs", "aesenv.trajectory", "aesenv.runner", "aesenv.webdev"),
    # surfaces: data building, serving, the command line, the package root
    ("aesenv.data", "aesenv.serve", "aesenv.cli"),
    ("aesenv",),
)


def layer_of(module: str, layers=LAYERS) -> int:
    """The index of the layer whose longest prefix matches `module` (-1: in none)."""
    best, found = -1, -1
    for index, prefixes in enumerate(layers):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, found = len(prefix), index
    return found


def _import_nodes(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement under `node`, at any depth (`if TYPE_CHECKING:` bodies included)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child
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


def _parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def import_graph(root: Path, package: str = LIBRARY) -> dict[str, set[str]]:
    """module -> the package's own modules it imports (self-imports left out), with the parent
    packages Python runs on the way, except the importer's own parents (already running)."""
    modules = source_modules(root, package)
    direct = {name: {t for _, _, t in imports(path, name, modules) if t in modules} - {name}
              for name, path in modules.items()}
    graph: dict[str, set[str]] = {}
    for name, targets in direct.items():
        own = set(_parents(name))
        graph[name] = targets | {p for t in targets for p in _parents(t) if p in modules and p not in own and p != name and direct[p]}
    return graph


def folder_of(module: str) -> str:
    """The folder a module is in: `aesenv.envs.remote` -> `aesenv.envs`; a top-level module
    (`aesenv.cli`) and the root package are their own."""
    return ".".join(module.split(".")[:2])


def folder_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """folder -> the other folders its modules import (from the module graph, no table)."""
    folders: dict[str, set[str]] = {}
    for source, targets in graph.items():
        own = folder_of(source)
        folders.setdefault(own, set()).update(folder_of(t) for t in targets if folder_of(t) != own)
    return folders


def upward_edges(graph: dict[str, set[str]], layers=LAYERS) -> list[str]:
    """`a -> b` for each edge from a module to one in a higher layer (or in no layer)."""
    found = []
    for source in sorted(graph):
        for target in sorted(graph[source]):
            if layer_of(target, layers) > layer_of(source, layers) or layer_of(target, layers) < 0:
                found.append(f"{source} (layer {layer_of(source, layers)}) -> {target} (layer {layer_of(target, layers)})")
    return found


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


def test_aesenv_has_no_folder_cycles():
    cycles = import_cycles(folder_graph(import_graph(ROOT)))
    assert not cycles, "import cycles among aesenv's folders:\n" + "\n".join(cycles)


def test_every_module_has_a_layer_and_imports_none_above_it():
    graph = import_graph(ROOT)
    homeless = [m for m in graph if layer_of(m) < 0]
    assert not homeless, f"modules in no layer of LAYERS: {homeless}"
    upward = upward_edges(graph)
    assert not upward, "imports from a lower layer into a higher one:\n" + "\n".join(upward)


def _loaded_after(statement: str) -> set[str]:
    probe = f"import sys\n{statement}\nprint('\\n'.join(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True)
    return set(result.stdout.split())


def test_importing_aesenv_loads_no_kind_and_no_heavy_dependency():
    loaded = _loaded_after("import aesenv")
    heavy = sorted(m for m in loaded if m.split(".")[0] in ("playwright", "torch", "openai", "ray", "vllm"))
    kinds = sorted(m for m in loaded if m.startswith(("aesenv.kinds.web", "aesenv.kinds.plot", "aesenv.kinds.project",
                                                        "aesenv.kinds.base", "aesenv.render", "aesenv.rewards")))
    assert not heavy and not kinds, f"`import aesenv` loaded {heavy + kinds}"
    import_render = _loaded_after("import aesenv.render")  # the kinds' registry of names may load, no kind
    above = sorted(m for m in import_render if m.startswith(("aesenv.kinds.", "aesenv.channels", "aesenv.rewards"))
                   and m != "aesenv.kinds.envs")
    assert not above, f"`import aesenv.render` loaded {above}"


def test_a_kind_loads_on_first_lookup():
    loaded = _loaded_after("import gymnasium as gym, aesenv\nassert 'AesPlot-v0' in gym.registry\n"
                           "from aesenv.kinds import KINDS\nKINDS['plot']")
    assert "aesenv.kinds.plot.kind" in loaded and "aesenv.kinds.project.kind" not in loaded


def test_making_a_web_env_loads_no_other_kind():
    """A pipeline builds a kind's parts on its first task: the web env loads neither the plot nor
    the project kind (nor, through them, the OpenAI SDK the plot judges import)."""
    loaded = _loaded_after("import gymnasium as gym, aesenv\nenv = gym.make('AesWeb-v0')")
    others = sorted(m for m in loaded if m.startswith(("aesenv.kinds.plot", "aesenv.kinds.project")))
    assert "aesenv.kinds.web.kind" in loaded and not others, f"gym.make('AesWeb-v0') loaded {others}"


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
                                                    "lib/d.py:4: import train",  # a type-only import too
                                                    "lib/sub/leaf.py:1: import benchmarks"]
    graph = import_graph(tmp_path, "lib")
    assert graph["lib"] == {"lib.a"}  # a module's own parent packages are not edges
    assert graph["lib.sub"] == {"lib.a", "lib.sub.leaf"}  # relative imports resolved
    assert graph["lib.d"] == {"lib.e"}  # type-only imports count; strings do not
    assert graph["lib.e"] == {"lib.d"}
    assert import_cycles(graph) == ["lib.a -> lib.b -> lib.c -> lib.a", "lib.d -> lib.e -> lib.d"]
    layers = (("lib.sub", "lib.b"), ("lib.a",), ("lib",))
    assert upward_edges(graph, layers) == ["lib.b (layer 0) -> lib.c (layer 2)", "lib.sub (layer 0) -> lib.a (layer 1)"]
    assert layer_of("lib.sub.leaf", layers) == 0 and layer_of("lib.subway", layers) == 2  # prefixes end at a dot
    assert layer_of("other", layers) == -1 and upward_edges({"lib.a": {"other"}}, layers) == [
        "lib.a (layer 1) -> other (layer -1)"]
    folders = folder_graph(graph)
    assert folders["lib.sub"] == {"lib.a"} and folders["lib"] == {"lib.a"}  # lib.sub.leaf's edge is inside lib.sub
    assert import_cycles(folders) == ["lib.a -> lib.b -> lib.c -> lib.a", "lib.d -> lib.e -> lib.d"]
    assert import_cycles(folder_graph({"lib.x.one": {"lib.y.two"}, "lib.y.two": {"lib.y.three"},
                                       "lib.y.three": {"lib.x.four"}, "lib.x.four": set()})) == [
        "lib.x -> lib.y -> lib.x"]  # no module cycle, a folder cycle


def test_importing_a_module_runs_its_parent_packages(tmp_path):
    files = {"lib/__init__.py": "", "lib/low.py": "from lib.high.leaf import x\nfrom lib.inert.leaf import y\n",
             "lib/high/__init__.py": "from lib import low\n", "lib/high/leaf.py": "x = 1\n",
             "lib/inert/__init__.py": "import os\n", "lib/inert/leaf.py": "y = 1\n"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    graph = import_graph(tmp_path, "lib")
    # lib.high's __init__ runs first; lib.inert's runs too, but loads nothing of lib
    assert graph["lib.low"] == {"lib.high.leaf", "lib.high", "lib.inert.leaf"}
    assert graph["lib.high.leaf"] == set()  # its own parent lib.high is already running
    assert import_cycles(graph) == ["lib.high -> lib.low -> lib.high"]
