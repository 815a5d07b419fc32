"""The package's shape, read from its own imports: packages in layers, no circle across packages,
no import back up the layers, no module over 350 lines, and a knob's path kept short.

Every ``import`` counts, including those inside functions and under ``TYPE_CHECKING``: a
circle through a lazy import is still a circle for whoever reads the code.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "kgx"
# Bottom to top: a module imports from its own package or from packages below it.
LAYERS = [
    "core",
    "explain",
    "kg",
    "datasets",
    "diagnose",
    "llm",
    "methods",
    "results",
    "track",
    "report",
    "run",
    "estimate",
    "entry",
]
# `python -m kgx`, `-m kgx.score`, `-m kgx.ui`, and the Python API (`kgx.run_experiment`, `kgx.run_sweep`, `kgx.load_runs`)
ENTRY_POINTS = {"kgx", "kgx.__main__", "kgx.score", "kgx.ui", "kgx.api"}
MAX_LINES = 350


def modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        name = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The kgx modules ``name`` imports (a package's ``from kgx.x import y`` names module y when y
    is one)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "kgx")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "kgx":
                continue
            for alias in node.names:
                out.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in known else target)
    return {m for m in out if m in known and m != name}


def package(module: str) -> str:
    return "entry" if module in ENTRY_POINTS else module.split(".")[1]


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def test_every_module_sits_in_a_known_layer(graph):
    assert {package(m) for m in graph} <= set(LAYERS)


def test_no_import_runs_back_up_the_layers(graph):
    upward = sorted(
        f"{a} -> {b}"
        for a, targets in graph.items()
        for b in targets
        if LAYERS.index(package(b)) > LAYERS.index(package(a))
    )
    assert upward == []


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iterative: the import circles (components of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(component)
    return circles


def test_no_import_circle_crosses_packages(graph):
    crossing = [sorted(c) for c in strongly_connected(graph) if len({package(m) for m in c}) > 1]
    assert crossing == []


def test_no_import_circle_at_all(graph):
    """Inside a package too: a circle through a lazy import is still one for whoever reads it."""
    assert [sorted(c) for c in strongly_connected(graph)] == []


def test_the_layer_test_sees_a_circle_and_an_upward_import():
    graph = {"kgx.core.a": {"kgx.run.b"}, "kgx.run.b": {"kgx.core.a"}}
    assert strongly_connected(graph) == [{"kgx.core.a", "kgx.run.b"}]
    assert LAYERS.index(package("kgx.run.b")) > LAYERS.index(package("kgx.core.a"))


def test_no_module_is_over_350_lines():
    long = {
        str(p.relative_to(ROOT.parent)): n
        for p in ROOT.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def test_no_module_name_is_used_twice_for_different_things():
    """``failures.py`` vs ``report/failures.py``, ``summary.py`` vs ``report/summary.py`` were
    two things each under one name; a stem may repeat only for a package's entry files, and across
    method families for one role (each family's ``prompts.py`` holds its prompts)."""
    stems: dict[str, list[str]] = {}
    for p in ROOT.rglob("*.py"):
        if p.name not in ("__init__.py", "__main__.py"):
            role = "methods/<family>" if p.parent.parent == ROOT / "methods" else str(p.parent.relative_to(ROOT))
            stems.setdefault(p.stem, []).append(f"{role}/{p.name}")
    family = "methods/<family>/"
    repeated = {s: where for s, where in stems.items() if len(where) > 1}
    assert {s: where for s, where in repeated.items() if not all(w.startswith(family) for w in where)} == {}


def test_each_method_family_is_a_package_of_its_own():
    """A method with modules of its own (prompts, search, ...) is a package under ``kgx/methods/``:
    its algorithm in ``__init__.py``, each concern beside it; ``kgx/methods/`` itself holds the kit
    every method shares and the one-file baselines."""
    flat = sorted(p.stem for p in (ROOT / "methods").glob("*.py") if p.name != "__init__.py")
    assert flat == ["answers", "base", "cot", "fallbacks", "io", "kit", "samplers", "sc"]
    families = sorted(p.parent.name for p in (ROOT / "methods").glob("*/__init__.py"))
    assert families == ["cgpe", "fidelis", "gog", "knowpath", "lmp", "paths_over_graph", "pog", "structgpt", "tog"]


@pytest.mark.parametrize("method", ["lmp", "knowpath", "tog", "pog", "structgpt", "cgpe"])
def test_a_method_knob_reaches_its_use_in_at_most_four_files(graph, method):
    """A method's knobs (``method.width``, ``method.depth``, ...) are declared in its own file and
    read there; the files they can reach are the method's own and the method modules it imports
    (kit, prompts, samplers): each knob is named in at most four of them."""
    from kgx.methods import METHODS

    schema = METHODS[method].config
    reach = {f"kgx.methods.{method}"}
    reach |= {m for m in graph[f"kgx.methods.{method}"] if m.startswith("kgx.methods.")}
    texts = {m: modules()[m].read_text() for m in reach}
    base = {f.name for f in dataclasses.fields(METHODS["io"].config)}
    for knob in (f.name for f in dataclasses.fields(schema) if f.name not in base):
        files = sorted(m for m, text in texts.items() if f".{knob}" in text)
        assert len(files) <= 4, f"method.{knob} of {method} is read in {files}"


@pytest.mark.parametrize("package", sorted(p.parent.name for p in ROOT.glob("*/__init__.py")))
def test_every_package_says_what_it_offers(package):
    """``__all__`` on every package: what a user or a plugin imports from it, each name importable."""
    import importlib

    module = importlib.import_module(f"kgx.{package}")
    assert module.__doc__, package
    offered = getattr(module, "__all__", None)
    assert offered, f"kgx.{package} has no __all__"
    for name in offered:
        assert hasattr(module, name) or importlib.import_module(f"kgx.{package}.{name}"), name


def test_tests_mirror_the_package():
    """``tests/<package>/`` tests ``kgx/<package>/``; ``tests/`` itself only the entry points and the
    checkout as a whole."""
    tests = ROOT.parent / "tests"
    folders = {p.parent.name for p in tests.glob("*/test_*.py")}
    assert folders <= {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    root = sorted(p.stem.removeprefix("test_") for p in tests.glob("test_*.py"))
    assert root == [
        "api",
        "cli",
        "dashboard",
        "docs",
        "layout",
        "notebook",
        "plugins",
        "readme",
        "score",
        "score_rog",
        "traps",
        "ui",
    ]
