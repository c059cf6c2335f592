"""Imports point downward only (CONTRIBUTING.md): the core and the transcription never import the edge."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "trajopt"
EDGE = ("trajopt.io", "trajopt.opensim_reference", "trajopt.cli", "trajopt.tools", "trajopt.reports", "trajopt.bench")
LOWER = ("multibody", "muscles", "paths", "osim", "contact", "ocp", "gait")
# trajopt/paths/cli.py is the fit-paths command (edge by its nature) that lives beside its package.
COMMANDS = {ROOT / "paths" / "cli.py"}


def _imports(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


@pytest.mark.parametrize("package", LOWER)
def test_no_upward_imports(package):
    offending = [f"{path.relative_to(ROOT.parent)} imports {module}"
                 for path in sorted((ROOT / package).rglob("*.py")) if path not in COMMANDS
                 for module in _imports(path) if module.startswith(EDGE)]
    assert not offending, offending
