"""Every room on its floor: the package's layers (docs/architecture.md) import only downwards,
no module imports itself back through others, and no file is over 800 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

SRC = Path(__file__).resolve().parents[1] / "src" / "versapub"

#: Each top-level module or folder of the package and its floor (docs/architecture.md):
#: a module imports only from its own floor or below.
FLOORS: dict[str, float] = {
    # the ground floor: the release format, errors, the plug-in builder, the version
    "errors": 0,
    "formats": 0,
    "plugins": 0,
    "_version": 0,
    # the data model and its out-of-core backend
    "data": 1,
    "scale": 1,
    "privacy": 2,
    "schema": 3,
    "decompositions": 4,
    "anonymizers": 5,
    "treatments": 5,
    "mechanisms": 5,
    # the release model and utility, table kinds, collections of marginals
    "release": 6,
    "model": 6,
    "kinds": 6,
    "marginals": 6,
    "verify": 7,
    # files: reading inputs and configurations, writing releases, reports
    "io": 8,
    "reports": 8,
    # the application layer: publish side (api, workflow), read side (inspect)
    "api": 9,
    "publishing": 9,
    "workflow": 9,
    "inspect": 9,
    # front ends and what only they use
    "datasets": 10,
    "experiments": 10,
    "web": 10.5,
    "cli": 11,
    "__init__": 11,
}


def _modules() -> dict[str, Path]:
    out = {}
    for f in SRC.rglob("*.py"):
        parts = list(f.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


def _imports(path: Path) -> list[tuple[str, int, str]]:
    """(module, line, imported names' module) of every import outside ``if TYPE_CHECKING:``,
    function-level imports included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(m)
        for n in ast.walk(tree)
        if isinstance(n, ast.If) and isinstance(n.test, ast.Name) and n.test.id == "TYPE_CHECKING"
        for m in ast.walk(n)
    }
    out = []
    for n in ast.walk(tree):
        if id(n) in typing_only:
            continue
        if isinstance(n, ast.Import):
            out += [(a.name, n.lineno, a.name) for a in n.names]
        elif isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
            out += [(n.module, n.lineno, f"{n.module}.{a.name}") for a in n.names]
    return out


def _floor(module: str) -> float:
    parts = module.split(".")
    return FLOORS["__init__" if len(parts) == 1 else parts[1]]


def test_every_top_level_module_has_a_floor() -> None:
    tops = {p.stem for p in SRC.glob("*.py")} | {p.name for p in SRC.iterdir() if (p / "__init__.py").is_file()}
    assert tops == set(FLOORS), tops ^ set(FLOORS)


def test_imports_only_go_down() -> None:
    mods = _modules()
    climbing = [
        f"{path.relative_to(SRC)}:{line} imports {target}"
        for name, path in mods.items()
        for target, line, _ in _imports(path)
        if target.startswith("versapub.") and _floor(target) > _floor(name)
    ]
    assert not climbing, climbing


def test_no_circles() -> None:
    mods = _modules()
    graph = nx.DiGraph()
    for name, path in mods.items():
        for module, _, imported in _imports(path):
            for target in (module, imported):
                if target in mods and target != name and not name.startswith(target + "."):
                    graph.add_edge(name, target)
    circles = list(nx.simple_cycles(graph, length_bound=10))
    assert not circles, circles[:5]


def test_no_file_over_800_lines() -> None:
    long = {str(f.relative_to(SRC)): n for f in SRC.rglob("*.py") if (n := len(f.read_text().splitlines())) > 800}
    assert not long, long


def test_the_formatter_is_the_exception_not_the_rule() -> None:
    skips = sum(f.read_text().count("fmt: skip") for f in SRC.rglob("*.py"))
    assert skips <= 60, skips


def test_no_function_over_100_lines() -> None:
    """Small functions (the house rule): none over 100 lines, its docstring included."""
    long = [
        f"{f.relative_to(SRC)}:{n.lineno} {n.name} ({n.end_lineno - n.lineno + 1} lines)"
        for f in SRC.rglob("*.py")
        for n in ast.walk(ast.parse(f.read_text(encoding="utf-8")))
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and (n.end_lineno or n.lineno) - n.lineno + 1 > 100
    ]
    assert not long, long


#: What the independent verifier never loads, however deep (issue 46): the publisher's
#: anonymizers, decompositions, schema, release model, table kinds and guarantees.
PUBLISHER = (
    "versapub.anonymizers",
    "versapub.decompositions",
    "versapub.schema",
    "versapub.model",
    "versapub.kinds",
    "versapub.privacy.guarantees",
)


def test_the_verifier_reaches_nothing_of_the_publisher() -> None:
    """The transitive import rule: from any module of ``versapub.verify``, following every
    import (function-level ones included), no module of the publisher is reached."""
    mods = _modules()
    graph = nx.DiGraph()
    for name, path in mods.items():
        for module, _, imported in _imports(path):
            for target in (module, imported):
                if target in mods and target != name:
                    graph.add_edge(name, target)
    starts = [m for m in mods if m == "versapub.verify" or m.startswith("versapub.verify.")]
    reached = set().union(*(nx.descendants(graph, m) for m in starts if m in graph))
    bad = sorted(m for m in reached if m.startswith(PUBLISHER))
    paths = [nx.shortest_path(graph, next(s for s in starts if nx.has_path(graph, s, b)), b) for b in bad[:3]]
    assert not bad, paths


def test_the_architecture_names_every_file() -> None:
    """``docs/architecture.md`` holds the map of every file as the code is (regenerate it with
    ``python scripts/architecture_files.py --write``)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "architecture_files", SRC.parents[1] / "scripts/architecture_files.py"
    )
    assert spec is not None and spec.loader is not None
    files = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(files)
    text = files.DOC.read_text(encoding="utf-8")
    assert files.replaced(text, FLOORS) == text, "run: python scripts/architecture_files.py --write"
