"""The package's layers: data flows one way, so imports only go down, never round in a circle, and no module
reaches into another's private names.  Read from the source with ``ast`` (imports inside functions count)."""

from __future__ import annotations

import ast
from pathlib import Path

import jaxgo

PACKAGE = Path(jaxgo.__file__).parent

TOP = 10  # the commands at the top: jaxgo/cli.py, demo.py, bench.py, match, eval (they may use each other)

# Lower first.  A module may import its own package and any package of a lower rank; the studies (rank 7) use
# the engine and are used by nothing below them, nor by each other.
LAYERS = {
    "util": 0, "go": 1, "data": 2, "features": 3, "playouts": 4, "learn": 5, "search": 6,
    "proof": 7, "bpip": 7, "cgt": 7, "crf": 7,
    "server": 8, "gtp": 9,
    "match": TOP, "eval": TOP,
}


def module_names() -> dict[str, Path]:
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ("jaxgo",) + path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def imports_of(name: str, path: Path, modules: dict) -> list[tuple[str, str | None]]:
    """(imported module, imported name or None) for every jaxgo import in the module's source."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names if alias.name.startswith("jaxgo")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                if path.name != "__init__.py":
                    base = base[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("jaxgo"):
                continue
            for alias in node.names:
                full = f"{target}.{alias.name}"
                found.append((full, None) if full in modules else (target, alias.name))
    return found


def rank(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:
        return -1  # the package itself (``from jaxgo import __version__``)
    return LAYERS.get(parts[1], TOP)


def package_of(module: str) -> str:
    """The layer package of a module (``search`` for jaxgo.search.searcher and jaxgo.search), else the module."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else module


def import_graph() -> dict[str, set[str]]:
    modules = module_names()
    graph = {}
    for name, path in modules.items():
        targets = set()
        for target, _ in imports_of(name, path, modules):
            while target not in modules and "." in target:
                target = target.rsplit(".", 1)[0]
            if target != name:
                targets.add(target)
        graph[name] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_every_package_has_a_layer():
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert packages <= set(LAYERS), f"packages without a layer: {packages - set(LAYERS)}"


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_no_import_from_a_lower_layer_to_a_higher_one():
    upward = []
    for source, targets in import_graph().items():
        for target in targets:
            if package_of(source) == package_of(target) or rank(target) < 0:
                continue
            if rank(source) == rank(target) == TOP:  # the commands at the top may use each other
                continue
            if rank(target) >= rank(source):
                upward.append(f"{source} -> {target}")
    assert upward == []


def test_no_private_names_imported_across_modules():
    modules = module_names()
    private = []
    for name, path in modules.items():
        for target, imported in imports_of(name, path, modules):
            if imported and imported.startswith("_") and not imported.startswith("__"):
                private.append(f"{name}: {imported} from {target}")
    assert private == []


def test_the_checks_catch_what_they_should():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert rank("jaxgo.search.searcher") > rank("jaxgo.playouts.xla.light") > rank("jaxgo.go.rules")
    assert rank("jaxgo.cli") == TOP and rank("jaxgo") < 0
    assert rank("jaxgo.eval.strength") == rank("jaxgo.match") == TOP > rank("jaxgo.gtp.engine")


def test_each_playout_backend_has_its_folder_and_native_loads_no_xla():
    top = sorted(p.stem for p in (PACKAGE / "playouts").glob("*.py"))
    assert len(top) <= 5, top
    policies = {"heavy", "light", "rules", "board", "features"}  # each policy's two implementations, side by side
    for backend in ("xla", "native"):
        assert policies <= {p.stem for p in (PACKAGE / "playouts" / backend).glob("*.py")}
    graph = import_graph()
    xla_reached = {f"{source} -> {target}" for source, targets in graph.items() for target in targets
                   if source.startswith(("jaxgo.playouts.native", "jaxgo.search.positions", "jaxgo.playouts.tables"))
                   and target.startswith("jaxgo.playouts.xla")}
    assert xla_reached == set()
