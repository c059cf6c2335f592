"""The tree passes ruff with the settings of pyproject.toml ([tool.ruff]: line length 120, pycodestyle, pyflakes)."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("trajopt", "tests", "trajopt_opensim")


@pytest.mark.skipif(importlib.util.find_spec("ruff") is None, reason="ruff is not installed")
def test_ruff_finds_nothing():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "json", *CHECKED],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    findings = json.loads(result.stdout or "[]")
    lines = [f"{Path(f['filename']).relative_to(ROOT)}:{f['location']['row']}: {f['code']} {f['message']}"
             for f in findings]
    assert findings == [], "\n".join(lines)
    assert result.returncode == 0, result.stderr
