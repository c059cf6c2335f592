"""The package's import map (CONTRIBUTING.md): every package sits in the folder of its layer (trajopt/core/,
trajopt/model/, trajopt/studies/, trajopt/edge/), imports point down the layers only, no two packages import each
other (directly or round about), and the library never imports its examples or benchmarks. Imports inside functions
count as much as those at the top of a module."""

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = ROOT / "trajopt"
# Lowest first. A package may import its own layer and the layers below it. A package's layer is the folder it sits
# in: trajopt/<layer>/<package>/. The modules at trajopt/ itself are the base, but for the front door, which sits
# with the edge: __init__ re-exports the public names of every layer, __main__ runs the command line.
LAYERS = ("base", "core", "model", "studies", "edge", "outside")
FOLDERS = LAYERS[1:5]
FRONT_DOOR = ("__init__", "__main__")
# Written with library calls, not part of the library: trajopt/examples/ and trajopt/benchmarks/.
OUTSIDE = ("examples", "benchmarks")


def _module(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def _package(module: str) -> str | None:
    """The package a module belongs to: trajopt.<layer>.<package>..., or trajopt.<module> at the base; a layer
    folder's own __init__ counts as a package named after the layer."""
    parts = module.split(".")
    if parts[0] != "trajopt":
        return None
    if len(parts) == 1:
        return "__init__"
    if parts[1] in FOLDERS:
        return parts[2] if len(parts) > 2 and parts[2] != "__init__" else parts[1]
    return parts[1]


def _layers_read_from_folders() -> tuple[dict[str, set[str]], list[str]]:
    """package -> the layers whose folders hold it, and the files that sit in no layer's folder."""
    layers, homeless = defaultdict(set), []
    for path in sorted(LIBRARY.rglob("*.py")):
        parts = path.relative_to(LIBRARY).parts
        package = _package(_module(path))
        if len(parts) == 1:
            layers[package].add("edge" if package in FRONT_DOOR else "base")
        elif parts[0] in FOLDERS:
            layers[package].add(parts[0])
        elif parts[0] in OUTSIDE:
            layers[package].add("outside")
        else:
            homeless.append(str(path.relative_to(ROOT)))
    return layers, homeless


FOUND, HOMELESS = _layers_read_from_folders()
LAYER = {package: LAYERS.index(min(layers, key=LAYERS.index)) for package, layers in FOUND.items()}


def _is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _imported(node: ast.AST, module: str, is_package: bool) -> list[str]:
    """The modules an import statement names (``from a import b`` names a.b when b is a module, else a);
    relative imports resolved against ``module``."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        anchor = module.split(".")[:len(module.split(".")) - node.level + is_package]
        base = ".".join(anchor + ([node.module] if node.module else []))
    return [f"{base}.{alias.name}" if _is_module(f"{base}.{alias.name}") else base for alias in node.names]


def _import_map() -> dict[str, dict[str, list[str]]]:
    """package -> imported package -> the files that import it."""
    edges = defaultdict(lambda: defaultdict(list))
    for path in sorted(LIBRARY.rglob("*.py")):
        module = _module(path)
        source = _package(module)
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text())):
            for name in _imported(node, module.removesuffix(".__init__"), is_package):
                target = _package(name)
                if target and target != source:
                    edges[source][target].append(str(path.relative_to(ROOT)))
    return edges


IMPORTS = _import_map()


def test_every_package_has_a_layer():
    """Each file sits at trajopt/, in a layer's folder or outside the library, and no package name is in two
    layers."""
    assert HOMELESS == []
    assert {package: sorted(layers) for package, layers in FOUND.items() if len(layers) > 1} == {}


def test_the_layer_folders_hold_the_packages():
    """The map is read from the folders (the checks below would pass on an empty map)."""
    assert [LAYERS[LAYER[p]] for p in ("errors", "table", "muscles", "multibody", "ocp", "osim", "paths",
                                       "analysis", "gait", "cli", "examples")] == \
        ["base", "base", "core", "core", "core", "model", "model", "studies", "studies", "edge", "outside"]


@pytest.mark.parametrize("package", sorted(LAYER))
def test_imports_point_down(package):
    upward = [f"{file} imports {target} ({LAYERS[LAYER[target]]})"
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
    offending = [file for package, targets in IMPORTS.items() if LAYER[package] < LAYERS.index("outside")
                 for target in OUTSIDE for file in targets.get(target, ())]
    assert offending == []


def test_the_map_holds_known_imports():
    """The map is read from the code (the checks above would pass on an empty map)."""
    assert "osim" in IMPORTS["paths"] and "multibody" in IMPORTS["osim"]
    assert any("io" in targets for package, targets in IMPORTS.items() if package == "analysis")


def test_contributing_draws_the_map_the_code_has():
    """CONTRIBUTING.md's map (layer, package -> imports besides the base modules) is the one read from the code and
    the folders."""
    text = (ROOT / "CONTRIBUTING.md").read_text()
    block = text.split("checks\nthat it is the code's):\n```\n", 1)[1].split("```", 1)[0]
    drawn, drawn_layers, layer = {}, {}, None
    for line in block.splitlines():
        layer = line[:9].strip() or layer
        for part in line[9:].split(";"):
            if "->" in part:
                package, targets = (side.strip() for side in part.split("->"))
                drawn[package] = set() if targets == "(base only)" else {t.strip() for t in targets.split(",")}
                drawn_layers[package] = layer
    base = {"errors", "table"}
    code = {package: set(IMPORTS.get(package, {})) - base for package in drawn}
    assert drawn == code
    assert set(drawn) == {p for p, rank in LAYER.items() if 1 <= rank <= 4} - set(FRONT_DOOR) - set(FOLDERS)
    assert drawn_layers == {package: LAYERS[LAYER[package]] for package in drawn}


# Imports a function may defer: matplotlib (slow to load, only figures need it) and optional dependencies.
DEFERRED = ("matplotlib", "distributed", "dask", "yaml")


def test_imports_inside_functions_break_a_cycle_or_defer_a_heavy_module():
    """CONTRIBUTING: imports go at the top of a module; one inside a function defers matplotlib or an optional
    dependency, or breaks a cycle between two modules and says so (``# here: <module> imports this module``)."""
    unexplained = []
    for path in sorted(LIBRARY.rglob("*.py")):
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
