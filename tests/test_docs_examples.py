"""The Python examples of docs/ run as written (on a coarser mesh) and do what their text says."""

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _code(name: str) -> str:
    return "\n".join(re.findall(r"```python\n(.*?)```", (DOCS / name).read_text(), re.S))


def test_gait_prediction_example_walks_at_its_speed_and_mirrors(tmp_path, monkeypatch):
    """The example's half cycle converges, walks 1.2 m/s on average, and ends in the mirror image of its start."""
    code = _code("gait_prediction.md")
    assert code.count("\n") < 60  # the docs promise a page of library calls
    code = code.replace("INTERVALS = 50", "INTERVALS = 15").replace("print_level=5", "print_level=0")
    monkeypatch.chdir(tmp_path)
    root = Path(__file__).resolve().parent.parent
    namespace = {}
    exec(compile(code.replace('FOLDER = "', f'FOLDER = "{root}/'), "gait_prediction.md", "exec"), namespace)
    solution, walk, distance = namespace["solution"], namespace["walk"], namespace["distance"]
    assert solution.success
    assert solution.value(distance) / solution.duration == pytest.approx(1.2, rel=1e-6)
    built = walk.muscle_driven
    q = solution.value(built.q)
    mirror = walk.symmetry.for_variable("q")
    start_image = mirror @ q[:, 0]
    keep = [i for i, n in enumerate(built.model.coordinate_names) if n != "pelvis_tx"]
    assert abs(q[keep, -1] - start_image[keep]).max() < 1e-6
    assert (tmp_path / "half_cycle.sto").exists()
