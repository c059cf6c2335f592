"""The package's import map (CONTRIBUTING.md): every package sits in one layer, imports point down the layers
only, no two packages import each other (directly or round about), and the library never imports its examples or
benchmarks. Imports inside functions count as much as those at the top of a module."""

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Lowest first. A package may import its own layer and the layers below it.
LAYERS = (
    ("base", ("errors", "table")),
    ("core", ("muscles", "multibody", "ocp")),
    ("model", ("io", "osim", "paths", "contact", "musculoskeletal")),
    ("studies", ("analysis", "prediction", "gait")),
    ("edge", ("reports", "tools", "batch", "cli", "__main__", "__init__")),
    ("outside", ("examples", "benchmarks")),
)
LAYER = {package: rank for rank, (_, packages) in enumerate(LAYERS) for package in packages}


def _package(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "trajopt":
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def _import_map() -> dict[str, dict[str, list[str]]]:
    """package -> imported package -> the files that import it."""
    edges = defaultdict(lambda: defaultdict(list))
    for path in sorted((ROOT / "trajopt").rglob("*.py")):
        relative = path.relative_to(ROOT).with_suffix("")
        source = _package(".".join(relative.parts))
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module] if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 else \
                [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                target = _package(name)
                if target and target != source:
                    edges[source][target].append(str(path.relative_to(ROOT)))
    return edges


IMPORTS = _import_map()


def test_every_package_has_a_layer():
    packages = {_package(".".join(p.relative_to(ROOT).with_suffix("").parts)) for p in (ROOT / "trajopt").rglob("*.py")}
    assert sorted(packages - set(LAYER)) == []


@pytest.mark.parametrize("package", sorted(LAYER))
def test_imports_point_down(package):
    upward = [f"{file} imports trajopt.{target} ({LAYERS[LAYER[target]][0]})"
              for target, files in IMPORTS.get(package, {}).items() if LAYER.get(target, 99) > LAYER[package]
              for file in files]
    assert upward == []


def test_no_cycles_between_packages():
    def reaches(start, goal):
        seen, stack = set(), [start]
        while stack:
            for nxt in IMPORTS.get(stack.pop(), {}):
                if nxt == goal:
                    return True
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return False

    cycles = sorted(f"{a} <-> {b}" for a in IMPORTS for b in IMPORTS[a] if a < b and reaches(b, a)) + \
        sorted(f"{a} <-> {b}" for a in IMPORTS for b in IMPORTS[a]
               if b < a and reaches(b, a) and a not in IMPORTS.get(b, {}))
    assert cycles == []


def test_the_library_never_imports_examples_or_benchmarks():
    offending = [file for package, targets in IMPORTS.items() if LAYER[package] < LAYER["examples"]
                 for target in ("examples", "benchmarks") for file in targets.get(target, ())]
    assert offending == []


def test_the_map_holds_known_imports():
    """The map is read from the code (the checks above would pass on an empty map)."""
    assert "osim" in IMPORTS["paths"] and "multibody" in IMPORTS["osim"]
    assert any("io" in targets for package, targets in IMPORTS.items() if package == "analysis")


def test_contributing_draws_the_map_the_code_has():
    """CONTRIBUTING.md's map (package -> imports besides the base modules) is the one read from the code."""
    text = (ROOT / "CONTRIBUTING.md").read_text()
    block = text.split("checks\nthat it is the code's):\n```\n", 1)[1].split("```", 1)[0]
    drawn = {}
    for line in block.splitlines():
        for part in line[9:].split(";"):
            if "->" in part:
                package, targets = (side.strip() for side in part.split("->"))
                drawn[package] = set() if targets == "(base only)" else {t.strip() for t in targets.split(",")}
    base = {"errors", "table"}
    code = {package: set(IMPORTS.get(package, {})) - base for package in drawn}
    assert drawn == code
    assert set(drawn) == {p for p, rank in LAYER.items() if 1 <= rank <= 4} - {"__main__", "__init__"}


# Imports a function may defer: matplotlib (slow to load, only figures need it) and optional dependencies.
DEFERRED = ("matplotlib", "distributed", "dask", "yaml")


def test_imports_inside_functions_break_a_cycle_or_defer_a_heavy_module():
    """CONTRIBUTING: imports go at the top of a module; one inside a function defers matplotlib or an optional
    dependency, or breaks a cycle between two modules and says so (``# here: <module> imports this module``)."""
    unexplained = []
    for path in sorted((ROOT / "trajopt").rglob("*.py")):
        relative = str(path.relative_to(ROOT))
        text = path.read_text()
        lines = text.splitlines()
        for function in ast.walk(ast.parse(text)):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                if not isinstance(node, (ast.Import, ast.ImportFrom)):
                    continue
                module = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
                said = "# here:" in lines[node.lineno - 1] or "# here:" in lines[node.lineno - 2]
                if not (module or "").startswith(DEFERRED) and not said:
                    unexplained.append(f"{relative}:{node.lineno}")
    assert unexplained == []
